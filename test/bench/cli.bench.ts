/**
 * @module
 * CLI start time (issue 15 measures it; issue 14 works on it): `skein call runtime.ping`, from process start
 * to exit, against a running runtime, each beside a raw baseline started the same way in the same run:
 * - private broker (`skein up --private`) vs a raw NATS request: a Node process with nats.js alone that
 *   connects with the same operator creds, sends the same request and prints the reply
 *   (`raw-nats-request.mjs`);
 * - embedded (`skein up --embedded`, the unix socket) vs `node -e 0`.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SKEIN_BIN, cleanEnv, startCliRuntime, startEmbeddedCli } from '../support/cli.ts';
import { now } from './bench-pty.ts';
import { percentile, scaled, type Bench, type BenchResult } from './types.ts';

const RUNS = scaled(15, 2);
const RAW_REQUEST = fileURLToPath(new URL('./raw-nats-request.mjs', import.meta.url));

function timed(args: string[], cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = now();
    execFile(process.execPath, args, { cwd, env: cleanEnv(), timeout: 30_000 }, (err, stdout) => {
      if (err) reject(err);
      else if (args.at(-1) !== '0' && !/pong/.test(stdout)) reject(new Error(`no pong: ${stdout}`));
      else resolve(now() - t);
    });
  });
}

/** Alternates the two commands (so load hits both alike) after one warm-up each; returns both samples. */
async function pair(ours: string[], raw: string[], cwd: string): Promise<{ ours: number[]; raw: number[] }> {
  await timed(ours, cwd);
  await timed(raw, cwd);
  const out = { ours: [] as number[], raw: [] as number[] };
  for (let i = 0; i < RUNS; i++) {
    out.raw.push(await timed(raw, cwd));
    out.ours.push(await timed(ours, cwd));
  }
  return out;
}

function result(name: string, samples: { ours: number[]; raw: number[] }, baseline: string): BenchResult {
  const v = percentile(samples.ours, 50);
  const b = percentile(samples.raw, 50);
  return {
    name,
    value: v,
    unit: 'ms',
    baseline: b,
    ratio: v / b,
    target: '≤ 300 ms',
    met: v <= 300,
    note:
      `baseline = ${baseline}; ratio = skein / baseline (lower is better); ` +
      `p90 ${percentile(samples.ours, 90).toFixed(0)} ms; ${RUNS} runs (issue 14)`,
  };
}

async function privateBroker(): Promise<BenchResult> {
  const run = await startCliRuntime({ mode: 'private', policy: { default: 'allow' } });
  try {
    const samples = await pair(
      [SKEIN_BIN, 'call', 'runtime.ping', '--data', run.data],
      [RAW_REQUEST, run.url!, join(run.data, 'auth', 'operator.creds'), 'skein.cmd.main.runtime.ping', '{"data":{}}'],
      run.workspace,
    );
    return result(
      '`skein call runtime.ping` (private broker) process start to exit p50',
      samples,
      'a raw NATS request process (nats.js, same creds and request)',
    );
  } finally {
    await run.dispose();
  }
}

async function embedded(): Promise<BenchResult> {
  const run = await startEmbeddedCli({ policy: { default: 'allow' } });
  try {
    const samples = await pair([SKEIN_BIN, 'call', 'runtime.ping', '--data', run.data], ['-e', '0'], run.workspace);
    return result('`skein call runtime.ping` (embedded, socket) process start to exit p50', samples, '`node -e 0`');
  } finally {
    await run.dispose();
  }
}

export const bench: Bench = {
  name: 'cli',
  async run() {
    return [await privateBroker(), await embedded()];
  },
};
