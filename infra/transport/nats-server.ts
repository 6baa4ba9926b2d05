/**
 * @module
 * Starts and stops a private nats-server on a free loopback port with
 * JetStream in its own store dir: for `skein up` in private-broker mode and
 * for tests. Stopped by PID only, never by name.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export type NatsServerHandle = {
  url: string;
  port: number;
  pid: number;
  storeDir: string;
  /** Resolves when the process exits, for whatever reason (stop, crash, kill -9). */
  exited: Promise<void>;
  /** The end of what the server wrote to stderr (at most STDERR_TAIL_CHARS): why it stopped, when it dies. */
  stderrTail(): string;
  stop(): Promise<void>;
};

/**
 * How much of the server's stderr is kept. It logs a line for each permission violation (~150 bytes with the
 * subject), so an agent publishing where it may not can make it write as fast as it publishes; all of it was
 * kept in this process's heap for the server's life (5,000 violations: 735 KB).
 */
export const STDERR_TAIL_CHARS = 16 * 1024;

/** Whether `bin` is runnable (on PATH or a path). */
export function natsServerAvailable(bin = 'nats-server'): boolean {
  const probe = spawnSync(bin, ['--version'], { stdio: 'ignore' });
  return probe.status === 0;
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}

/**
 * `count` distinct TCP ports that were free a moment ago on 127.0.0.1: all are held open together, so two
 * calls in a row cannot hand out the same port (the kernel may reuse a port as soon as it is closed).
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  try {
    return await Promise.all(
      servers.map(
        (server) =>
          new Promise<number>((resolve, reject) => {
            server.unref();
            server.on('error', reject);
            server.listen(0, '127.0.0.1', () => {
              const address = server.address();
              resolve(typeof address === 'object' && address ? address.port : 0);
            });
          }),
      ),
    );
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}

/** Whether a start failed because another process took the port between choosing it and binding it. */
export function lostPortRace(err: unknown): boolean {
  return /address already in use/.test((err as Error)?.message ?? '');
}

export async function startNatsServer(options: {
  storeDir: string;
  bin?: string;
  port?: number;
  readyTimeoutMs?: number;
  /** A config file (operator-mode auth: `auth/server-config.ts`); the flags below still set address and store. */
  configFile?: string;
  /** More flags (a cluster's `--cluster`, `--routes`, `--server_name`…), after skein's own. */
  args?: readonly string[];
  /**
   * Start the server in a process group of its own: a signal sent to skein's group (Ctrl-C in the terminal
   * that runs `skein up`, `timeout`, a supervisor that signals the group) then reaches skein alone, which
   * drains into the broker and stops it last. In skein's group the broker died with the same signal, at the
   * start of the drain, and the drain's facts (`terminal.closed` of each open terminal) were never appended.
   */
  ownProcessGroup?: boolean;
}): Promise<NatsServerHandle> {
  mkdirSync(options.storeDir, { recursive: true });
  const port = options.port ?? (await freePort());
  const child = spawn(
    options.bin ?? 'nats-server',
    [
      ...(options.configFile ? ['-c', options.configFile] : []),
      ...['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', options.storeDir],
      ...(options.args ?? []),
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: options.ownProcessGroup ?? false,
    },
  );
  const pid = child.pid;
  if (pid === undefined)
    throw new Error(
      `could not start ${options.bin ?? 'nats-server'}: is it installed (apt-get install -y nats-server)?`,
    );
  let log = '';
  let ready = false;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `nats-server did not become ready within ${options.readyTimeoutMs ?? 10_000} ms:\n${log.slice(-2000)}`,
        ),
      );
    }, options.readyTimeoutMs ?? 10_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      log = (log + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
      if (!ready && log.includes('Server is ready')) {
        ready = true;
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      const ended = () =>
        reject(new Error(`nats-server exited with code ${code} before it was ready:\n${log.slice(-2000)}`));
      // 'exit' can come before the last of its stderr (why it stopped): told once the pipe closes, or soon after.
      const cap = setTimeout(ended, 250);
      cap.unref();
      child.once('close', () => {
        clearTimeout(cap);
        ended();
      });
    });
  });
  // If this process ends without stopping the server (a crash, a test worker torn down), take it along.
  const killOnExit = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      process.removeListener('exit', killOnExit);
      resolve();
    }),
  );
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    pid,
    storeDir: options.storeDir,
    exited,
    stderrTail: () => log,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Stops a nats-server left running by a runtime that died, if `pid` is still that server with that store. */
export async function stopStaleNatsServer(pid: number, storeDir: string): Promise<boolean> {
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return false;
  }
  if (!cmdline.includes('nats-server') || !cmdline.includes(storeDir)) return false;
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 50));
    if (!isAlive(pid)) return true;
  }
  process.kill(pid, 'SIGKILL');
  return true;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/\) Z /.test(stat);
  } catch {
    return false;
  }
}
