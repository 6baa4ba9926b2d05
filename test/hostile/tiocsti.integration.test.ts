/**
 * Input pushed into the terminal by a command (TIOCSTI), live: a program the gate allows pushes a denied line
 * into its own terminal's input queue, so that the shell reads it at the next prompt as if typed, and runs it
 * without the gate ever seeing it. A real runtime and a sandboxed bash, an allowing default with one deny rule
 * on rm; the keep file must survive, and a canary written by the pushed line must never appear.
 */
import { existsSync } from 'node:fs';
import { attack, expectNoCanary, keepFileScene, outcome, reportAttacks } from './support.ts';

const POLICY = { default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } };

const scene = keepFileScene(POLICY);
reportAttacks('tiocsti');
const exec = (command: string) => scene.exec(command);
const push = (line: string) =>
  `python3 -c 'import fcntl,sys,termios
for b in sys.argv[1].encode(): fcntl.ioctl(0, termios.TIOCSTI, bytes([b]))' '${line}\n'`;

describe('a line pushed into the terminal input by an allowed command', () => {
  attack('tiocsti', 'pushed before the command exits', async () => {
    const line = `rm -f keep.txt; printf %s%s ${scene.c.halves[0]} ${scene.c.halves[1]} > ${scene.c.path}`;
    // The push itself is refused (EPERM from the sandbox's seccomp filter): the allowed python3 exits 1.
    expect(outcome(await exec(push(line)))).toBe('ok');
    for (let i = 0; i < 3; i++) await exec('true');
    await new Promise((r) => setTimeout(r, 500));
    expect(existsSync(scene.keep)).toBe(true);
    await expectNoCanary(scene.rt, scene.c);
  });

  attack('tiocsti', 'pushed by a background job after the command ended', async () => {
    const line = `rm -f keep.txt; printf %s%s ${scene.c.halves[0]} ${scene.c.halves[1]} > ${scene.c.path}`;
    expect(outcome(await exec(`(sleep 0.5; ${push(line)}) &`))).toBe('ok');
    await new Promise((r) => setTimeout(r, 1500));
    for (let i = 0; i < 3; i++) await exec('true');
    expect(existsSync(scene.keep)).toBe(true);
    await expectNoCanary(scene.rt, scene.c);
  });
});
