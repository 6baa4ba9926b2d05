/**
 * @module
 * The one root logger of a process. JSON lines to stderr (stdout stays free
 * for protocols and command output), pretty-ish when stderr is a TTY.
 * Created once in the CLI and passed down; actors bind child loggers with ids.
 */
import pino, { type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Paths whose values are never logged: environments and credentials may sit in payloads. */
const REDACT = ['*.env', '*.password', '*.token', '*.apiKey', '*.secret', 'payload.data.env'];

export type LoggerOptions = {
  level?: LogLevel;
  /** Where lines go; defaults to fd 2. Tests pass an in-memory stream. */
  destination?: pino.DestinationStream;
  pretty?: boolean;
};

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const base = { service: 'skein' };
  const redact = { paths: REDACT, censor: '[redacted]' };
  if (options.destination) {
    return pino({ level, base, redact, timestamp: pino.stdTimeFunctions.isoTime }, options.destination);
  }
  const pretty = options.pretty ?? process.stderr.isTTY === true;
  if (pretty) {
    return pino({ level, base, redact, timestamp: false }, prettyStream());
  }
  return pino(
    { level, base, redact, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ dest: 2, sync: true }),
  );
}

/** A dependency-free readable form for humans at a terminal: `LEVEL msg key=value …`. */
function prettyStream(): pino.DestinationStream {
  const names: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
  return {
    write(line: string) {
      try {
        const {
          level,
          msg,
          service: _service,
          pid: _pid,
          hostname: _host,
          ...rest
        } = JSON.parse(line) as Record<string, unknown>;
        const fields = Object.entries(rest)
          .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
          .join(' ');
        process.stderr.write(`${names[level as number] ?? level} ${String(msg ?? '')}${fields ? ` ${fields}` : ''}\n`);
      } catch {
        process.stderr.write(line);
      }
    },
  };
}
