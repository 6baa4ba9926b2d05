/**
 * @module
 * CLI start time (issue 15 measures it; issue 14 works on it): `skein call
 * runtime.ping` from process start to exit against a running embedded
 * runtime (`skein up --embedded`), vs `node -e 0` started the same way.
 */
import { execFile } from 'node:child_process';
import { SKEIN_BIN, cleanEnv, startEmbeddedCli } from '../support/cli.ts';
import { now } from './bench-pty.ts';
import { percentile, scaled, type Bench, type BenchResult } from './types.ts';

const RUNS = scaled(15, 2);

function timed(args: string[], cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = now();
    execFile(process.execPath, args, { cwd, env: cleanEnv(), timeout: 30_000 }, (err, stdout) => {
      if (err) reject(err);
      else if (args.includes('runtime.ping') && !/pong/.test(stdout)) reject(new Error(`no pong: ${stdout}`));
      else resolve(now() - t);
    });
  });
}

export const bench: Bench = {
  name: 'cli',
  async run() {
    const run = await startEmbeddedCli({ policy: { default: 'allow' } });
    try {
      const ours: number[] = [];
      const node: number[] = [];
      await timed([SKEIN_BIN, 'call', 'runtime.ping', '--data', run.data], run.workspace); // warm the disk cache
      for (let i = 0; i < RUNS; i++) {
        node.push(await timed(['-e', '0'], run.workspace));
        ours.push(await timed([SKEIN_BIN, 'call', 'runtime.ping', '--data', run.data], run.workspace));
      }
      const v = percentile(ours, 50);
      const b = percentile(node, 50);
      const result: BenchResult = {
        name: '`skein call runtime.ping` process start to exit p50',
        value: v,
        unit: 'ms',
        baseline: b,
        ratio: v / b,
        target: '≤ 300 ms',
        met: v <= 300,
        note: `baseline = \`node -e 0\`; p90 ${percentile(ours, 90).toFixed(0)} ms; ${RUNS} runs (issue 14 owns it)`,
      };
      return [result];
    } finally {
      await run.dispose();
    }
  },
};
