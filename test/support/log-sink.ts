/**
 * @module
 * A pino logger that writes to memory, for tests that assert log lines.
 */
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../infra/kernel/log.ts';

export function memoryLogger(level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'silent' = 'warn'): {
  logger: Logger;
  lines: Array<Record<string, unknown>>;
} {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  return { logger: createLogger({ level, destination }), lines };
}
