/**
 * Holes an audit found in the gate, live: a real runtime and a sandboxed bash, an allowing default with one deny
 * rule on rm, and a file in the workspace each attack tries to remove. Each was allowed before the fix: `source
 * --`, a bash startup file or BASH_ENV naming the here-string, env -S's own escapes, prompt variables set by
 * printf -v, read, mapfile or as an array, and wrappers the table did not know. The keep file must survive every
 * one, and a canary that one attack writes through the same hole must never appear.
 */
import { existsSync } from 'node:fs';
import { attack, expectNoCanary, keepFileScene, keepsFile, outcome, reportAttacks, stillRuns } from './support.ts';

const POLICY = { default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } };

const scene = keepFileScene(POLICY);
reportAttacks('wrappers-audit');
const exec = (command: string) => scene.exec(command);

describe('rm through what the audit found', () => {
  keepsFile(scene, 'wrapper', [
    "source -- /dev/stdin <<<'rm -f keep.txt'",
    ". -- /dev/stdin <<<'rm -f keep.txt'",
    "bash --rcfile /dev/stdin -ic : <<<'rm -f keep.txt'",
    "bash --init-file /dev/stdin -ic : <<<'rm -f keep.txt'",
    "BASH_ENV=/dev/stdin bash -c : <<<'rm -f keep.txt'",
    "export BASH_ENV=/dev/stdin; bash -c : <<<'rm -f keep.txt'",
    "printf -v BASH_ENV /dev/stdin; export BASH_ENV; bash -c : <<<'rm -f keep.txt'",
    "env -S 'rm\\_-f\\_keep.txt'",
    "printf -v PS4 '$(rm -f keep.txt)'; set -x; :",
    "read -r PS4 <<<'$(rm -f keep.txt)'; set -x; :",
    "mapfile -t PS4 <<<'$(rm -f keep.txt)'; set -x; :",
    "declare -n p=PS4; p='$(rm -f keep.txt)'; set -x; :",
    "PS4=('$(rm -f keep.txt)'); set -x; :",
    'chroot / rm -f "$PWD/keep.txt"',
    "script -qc 'rm -f keep.txt' /dev/null",
    'unshare rm -f keep.txt',
    'setpriv rm -f keep.txt',
    'prlimit rm -f keep.txt',
    'logsave /dev/null rm -f keep.txt',
    'strace -o /dev/null rm -f keep.txt',
    'valgrind -q rm -f keep.txt',
    'fakeroot rm -f keep.txt',
    'setarch x86_64 rm -f keep.txt',
    'linux64 rm -f keep.txt',
    'dbus-run-session -- rm -f keep.txt',
    "sg root -c 'rm -f keep.txt'",
    "capsh -- -c 'rm -f keep.txt'",
  ]);

  attack('wrapper', 'a canary written by a here-string that --rcfile runs', async () => {
    const { halves, path } = scene.c;
    const script = `rm -f keep.txt; printf %s%s ${halves[0]} ${halves[1]} > ${path}`;
    const command = `bash --rcfile /dev/stdin -ic : <<<'${script}'`;
    expect(outcome(await exec(command))).toBe('permission_denied');
    expect(existsSync(scene.keep)).toBe(true);
    await expectNoCanary(scene.rt, scene.c);
  });

  stillRuns(scene, 'still runs the same wrappers around an allowed command (control group)', [
    "source -- /dev/stdin <<<'ls keep.txt'",
    "env -S 'ls\\_keep.txt'",
    'setarch x86_64 ls keep.txt',
  ]);
});
