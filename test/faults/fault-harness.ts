/**
 * @module
 * Real processes for the fault suite: a nats-server the test owns (so it can SIGKILL, SIGSTOP and restart
 * it on the same port and store), a `skein up` host in its own process run with
 * `--unhandled-rejections=strict` (any unhandled rejection kills it, and the test sees the exit), and a
 * client. The host's log lines are kept for assertions and printed when a test fails.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, startNatsServer, type NatsServerHandle } from '../../infra/transport/nats-server.ts';
import { cleanEnv, SKEIN_BIN } from '../support/cli.ts';

export type Broker = {
  url: string;
  current(): NatsServerHandle | undefined;
  kill(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
};

/** A broker on a fixed port and store, restartable after a kill. */
export async function startBroker(storeDir: string): Promise<Broker> {
  const port = await freePort();
  let server: NatsServerHandle | undefined = await startNatsServer({ storeDir, port });
  return {
    url: `nats://127.0.0.1:${port}`,
    current: () => server,
    async kill() {
      if (!server) return;
      process.kill(server.pid, 'SIGKILL');
      await server.exited;
      server = undefined;
    },
    async start() {
      server = await startNatsServer({ storeDir, port });
    },
    async stop() {
      await server?.stop();
      server = undefined;
    },
  };
}

export type HostProcess = {
  child: ChildProcess;
  logLines(): Array<Record<string, unknown>>;
  /** Everything the process printed (for failure messages). */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
  stop(): Promise<void>;
};

/** `skein up` in its own process, under `--unhandled-rejections=strict`. */
export async function startHost(options: {
  dir: string;
  mode: 'networked' | 'embedded' | 'private';
  natsUrl?: string;
  /** Default `<dir>/data`. */
  dataDir?: string;
  /** The project policy (default: allow everything). */
  policy?: unknown;
}): Promise<HostProcess> {
  const workspace = join(options.dir, 'ws');
  mkdirSync(join(workspace, '.skein'), { recursive: true });
  writeFileSync(join(workspace, '.skein', 'policy.json'), JSON.stringify(options.policy ?? { default: 'allow' }));
  const args = [
    '--unhandled-rejections=strict',
    SKEIN_BIN,
    'up',
    '--data',
    options.dataDir ?? join(options.dir, 'data'),
    '--workspace',
    workspace,
    '--log-level',
    'info',
    ...(options.mode === 'networked' ? ['--nats', options.natsUrl!] : [`--${options.mode}`]),
  ];
  const child = spawn(process.execPath, args, {
    cwd: options.dir,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  let stdout = '';
  let stderr = '';
  const parse = (text: string) => {
    for (const line of text.split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // Not a log line.
      }
    }
  };
  const splitter = () => {
    let pending = '';
    return (chunk: string) => {
      pending += chunk;
      const cut = pending.lastIndexOf('\n');
      if (cut < 0) return;
      parse(pending.slice(0, cut));
      pending = pending.slice(cut + 1);
    };
  };
  const outLines = splitter();
  const errLines = splitter();
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    outLines(chunk.toString());
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    errLines(chunk.toString());
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let exitedYet = false;
  void exited.then(() => (exitedYet = true));
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`skein up did not start:\n${stdout}\n${stderr}`)), 30_000);
    const check = () => {
      if (stdout.includes('skein up: mode')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`skein up exited with ${code}:\n${stdout}\n${stderr}`));
    });
  });
  await ready;
  return {
    child,
    logLines: () => lines,
    output: () => `${stdout}\n${stderr}`,
    exited,
    alive: () => !exitedYet,
    async stop() {
      if (exitedYet) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Percentile of a list of numbers (nearest rank). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
