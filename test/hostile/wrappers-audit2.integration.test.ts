/**
 * Holes a second audit found in the gate, live: a real runtime and a sandboxed bash, an allowing default with one
 * deny rule on rm, and a file in the workspace each attack tries to remove. Each was allowed before the fix: a
 * shell started with no command reading the pipe (newgrp, script, su), a completion word list, a prompt's octal
 * escapes, a descriptor named by its number alone, start-stop-daemon, and the empty word an unquoted brace
 * expansion leaves. The keep file must survive every one, and a canary that one attack writes through the same
 * hole must never appear.
 */
import { existsSync } from 'node:fs';
import { attack, expectNoCanary, keepFileScene, keepsFile, outcome, reportAttacks, stillRuns } from './support.ts';

const POLICY = { default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } };

const scene = keepFileScene(POLICY);
reportAttacks('wrappers-audit2');
const exec = (command: string) => scene.exec(command);

describe('rm through what the second audit found', () => {
  keepsFile(scene, 'wrapper', [
    "echo 'rm -f keep.txt' | newgrp",
    "echo 'rm -f keep.txt' | script -q /dev/null",
    "echo 'rm -f keep.txt' | su",
    "echo 'rm -f keep.txt' | sudo -s",
    "compgen -W '$(rm -f keep.txt)' a",
    "PS4='\\044\\050rm -f keep.txt\\051'; set -x; :",
    "PS4='\\140rm -f keep.txt\\140'; set -x; :",
    "cd /dev/fd && . 0 <<<'rm -f keep.txt'",
    'start-stop-daemon --start --chdir . --exec /usr/bin/rm -- -f keep.txt',
    'nice {,rm} -f keep.txt',
    'a=1 {,rm} -f keep.txt',
    'time {,,rm} -f keep.txt',
    'xargs {,rm} -f <<<keep.txt',
  ]);

  attack('wrapper', 'a canary written by a completion word list', async () => {
    const { halves, path } = scene.c;
    const command = `compgen -W '$(rm -f keep.txt; printf %s%s ${halves[0]} ${halves[1]} > ${path})' a`;
    expect(outcome(await exec(command))).toBe('permission_denied');
    expect(existsSync(scene.keep)).toBe(true);
    await expectNoCanary(scene.rt, scene.c);
  });

  stillRuns(scene, 'still runs the same commands without rm, and prompts that run nothing (control group)', [
    // In a subshell: the terminal finds its prompt by the PS1 it set.
    "(PS1='$ '; ls keep.txt)",
    "(export PS1='[\\u@\\h \\W]\\$ '; ls keep.txt)",
    'nice {,ls} keep.txt',
    "compgen -W 'keep.txt other' k",
  ]);
});
