/**
 * Input pushed into the terminal by a command (TIOCSTI), live: a program the gate allows pushes a denied line
 * into its own terminal's input queue, so that the shell reads it at the next prompt as if typed, and runs it
 * without the gate ever seeing it. A real runtime and a sandboxed bash, an allowing default with one deny rule
 * on rm; the keep file must survive, and a canary written by the pushed line must never appear.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestRuntime } from '../support/runtime.ts';
import {
  attack,
  type Canary,
  canary,
  expectNoCanary,
  hostileRuntime,
  openTerminal,
  outcome,
  reportAttacks,
} from './support.ts';

const POLICY = { default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } };

let rt: TestRuntime;
let terminalId: string;
let keep: string;
let c: Canary;

beforeAll(async () => {
  rt = await hostileRuntime(POLICY);
  keep = join(rt.workspace, 'keep.txt');
  writeFileSync(keep, 'keep\n');
  c = canary(rt.workspace);
  terminalId = await openTerminal(rt);
}, 60_000);
afterAll(async () => {
  await rt?.dispose();
  c?.dispose();
});
reportAttacks('tiocsti');

const exec = (command: string) => rt.call('terminal.exec', { terminalId, command, timeoutMs: 10_000 });
const push = (line: string) =>
  `python3 -c 'import fcntl,sys,termios
for b in sys.argv[1].encode(): fcntl.ioctl(0, termios.TIOCSTI, bytes([b]))' '${line}\n'`;

describe('a line pushed into the terminal input by an allowed command', () => {
  attack('tiocsti', 'pushed before the command exits', async () => {
    const line = `rm -f keep.txt; printf %s%s ${c.halves[0]} ${c.halves[1]} > ${c.path}`;
    // The push itself is refused (EPERM from the sandbox's seccomp filter): the allowed python3 exits 1.
    expect(outcome(await exec(push(line)))).toBe('ok');
    for (let i = 0; i < 3; i++) await exec('true');
    await new Promise((r) => setTimeout(r, 500));
    expect(existsSync(keep)).toBe(true);
    await expectNoCanary(rt, c);
  });

  attack('tiocsti', 'pushed by a background job after the command ended', async () => {
    const line = `rm -f keep.txt; printf %s%s ${c.halves[0]} ${c.halves[1]} > ${c.path}`;
    expect(outcome(await exec(`(sleep 0.5; ${push(line)}) &`))).toBe('ok');
    await new Promise((r) => setTimeout(r, 1500));
    for (let i = 0; i < 3; i++) await exec('true');
    expect(existsSync(keep)).toBe(true);
    await expectNoCanary(rt, c);
  });
});
