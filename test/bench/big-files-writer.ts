/**
 * @module
 * The writer of big-files.bench.ts, in its own process so that building and encoding its 10 MB commands does
 * not block the event loop being measured. Args: data dir, socket path, lines of the big file, lines of the
 * many-line file. Prints one JSON line per step: {step, ms}; exits 1 with the reply on a failed step.
 */
import { call } from '../../infra/transport/client.ts';
import { operatorSocket } from '../support/socket.ts';

const [data, socket, bigArg, manyArg] = process.argv.slice(2);
const BIG = Number(bigArg);
const MANY = Number(manyArg);
const lines = (n: number, f: (i: number) => string) => `${Array.from({ length: n }, (_, i) => f(i)).join('\n')}\n`;
const big = lines(BIG, (i) => `line ${i} ${'x'.repeat(50)} ${i % 97}`);
const bigOther = lines(BIG, (i) => `row ${i * 3} ${'y'.repeat(52)}`);
const many = lines(MANY, (i) => `export const v${i} = ${i};`);
const manyOther = lines(MANY, (i) => `export let w${i} = '${i}';`);
const mid = Math.floor(MANY / 2);
const bus = await operatorSocket(data!, socket!);
// Wait for the go line: the parent starts measuring first.
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
const steps: Array<[string, string, unknown]> = [
  ['write 10 MB', 'file.write', { path: 'big.txt', content: big }],
  ['overwrite 10 MB', 'file.write', { path: 'big.txt', content: bigOther }],
  ['write 50k lines', 'file.write', { path: 'many.ts', content: many }],
  ['overwrite 50k lines', 'file.write', { path: 'many.ts', content: manyOther }],
  [
    'edit 50k lines',
    'file.edit',
    { path: 'many.ts', edits: [{ oldText: `export let w${mid} = '${mid}';`, newText: `export let w${mid} = 0;` }] },
  ],
];
for (const [step, type, d] of steps) {
  const t = performance.now();
  const reply = await call(bus, 'main', type, d, { timeoutMs: 120_000 });
  if (!reply.ok) {
    process.stderr.write(`${step} failed: ${JSON.stringify(reply).slice(0, 500)}\n`);
    process.exit(1);
  }
  process.stdout.write(`${JSON.stringify({ step, ms: Math.round(performance.now() - t) })}\n`);
}
await bus.close();
process.exit(0);
