/**
 * The typeahead mark, attacked from inside a sandboxed terminal, live. The shell discards input a command left
 * unread (typeahead) only while the host's mark says input was written (`TypeaheadMark`). An agent that could
 * empty or remove the mark could write a line the gate judges as input to a running program, have that program
 * read one byte of it and clear the mark, and the shell would run the rest at the next prompt unjudged. The
 * sandbox sees the rc directory read-only: every way to clear it must fail, the rest of the line must be
 * discarded, the keep file (behind a deny rule on rm) must survive and the canary must never appear.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { attack, expectNoCanary, keepFileScene, outcome, reportAttacks } from './support.ts';

const POLICY = { default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } };

const scene = keepFileScene(POLICY);
reportAttacks('typeahead-mark');

/** Clears the mark every way a program can: truncate, rewrite, remove, replace; each failure is printed. */
const CLEAR = `python3 - <<PY
import glob, os
tmp = os.environ.get('TMPDIR', '/tmp')
for p in sorted(set(glob.glob('/tmp/skein-*/typeahead') + glob.glob(tmp + '/skein-*/typeahead'))):
    print('mark', p)
    for how, f in [('truncate', lambda: open(p, 'w').close()), ('rewrite', lambda: open(p, 'r+').write('\\0')),
                   ('remove', lambda: os.remove(p)), ('replace', lambda: os.rename('/dev/null', p))]:
        try:
            f(); print(how, 'worked on', p)
        except OSError as e:
            print(how, 'refused:', e.strerror)
PY`;

/**
 * Runs `command` after a one-byte read of the terminal in key mode, writes `X<line>` once the terminal reads
 * keys (dd takes the X: judged whole, the line starts with `Xrm`, which no deny rule names), and returns the
 * command's output once it exited. A loaded machine may not have run stty by the yield: written only after.
 */
async function oneByteReadThenWrite(line: string, command = ''): Promise<string> {
  const running = await scene.rt.call('terminal.exec', {
    terminalId: scene.terminalId,
    command: `stty -icanon; echo keys; dd bs=1 count=1 of=/dev/null 2>/dev/null; stty icanon${command}`,
    yieldMs: 300,
    timeoutMs: 10_000,
  });
  if (!running.ok) throw new Error(JSON.stringify(running));
  expect(running['status']).toBe('running');
  await expect
    .poll(
      async () => {
        const r = await scene.rt.call('terminal.read', { terminalId: scene.terminalId, cursor: 0 });
        return r.ok && /^keys$/m.test(String(r['output']));
      },
      { timeout: 10_000, interval: 50 },
    )
    .toBe(true);
  expect(outcome(await scene.rt.call('terminal.write', { terminalId: scene.terminalId, data: `X${line}\r` }))).toBe(
    'ok',
  );
  const done = await scene.rt.call('terminal.wait', { terminalId: scene.terminalId, timeoutMs: 10_000 });
  if (!done.ok) throw new Error(JSON.stringify(done));
  expect(done['status']).toBe('exited');
  return String(done['output']);
}

describe('the typeahead mark, cleared by a sandboxed command', () => {
  attack('typeahead-mark', 'a one-byte read of allowed input, then the mark cleared', async () => {
    // Judged whole, the line starts with `Xrm`, which no deny rule names; with the X read away it is `rm …`.
    const line = `rm -f keep.txt; printf %s%s ${scene.c.halves[0]} ${scene.c.halves[1]}`;
    // dd reads one byte of the line the agent writes (the gate sees input to a program reading the terminal);
    // the rest stays in the terminal's queue while the command goes on to clear the mark.
    const report = await oneByteReadThenWrite(line, `; ${CLEAR}`);
    // The command found its terminal's mark (the rc directory is bound at its own path) and every way failed.
    const marks = [...report.matchAll(/^mark (\S+)$/gm)].map((m) => m[1]!);
    expect(marks).toHaveLength(1);
    for (const how of ['truncate', 'rewrite', 'remove', 'replace'])
      expect(report).toMatch(new RegExp(`${how} refused`));
    expect(report).not.toMatch(/worked on/);
    const dir = marks[0]!.slice(0, marks[0]!.lastIndexOf('/'));
    for (let i = 0; i < 3; i++) await scene.exec('true');
    await new Promise((r) => setTimeout(r, 500));
    expect(existsSync(scene.keep)).toBe(true);
    await expectNoCanary(scene.rt, scene.c);
    // The rc directory is the host's: its rc file as written, the mark still there.
    expect(readFileSync(join(dir, 'bashrc'), 'utf8')).toMatch(/__skein_typeahead/);
    expect(existsSync(join(dir, 'typeahead'))).toBe(true);
  });

  // Found by a review (3 December): a command redefined the rc's prompt function to print the end mark alone,
  // and the drain was gone. The gate refuses such a definition typed at the prompt (shell.integration.test.ts);
  // a sourced file still reaches the shell, which now refuses it: the function is read-only.
  attack('typeahead-mark', 'the prompt function redefined by a sourced file, then a one-byte read', async () => {
    const redefine = await scene.exec(
      `printf '%s\\n' "__skein_prompt() { builtin printf '\\033]133;D;0\\007'; }" "PROMPT_COMMAND=true" > redef.sh; ` +
        '. ./redef.sh; echo sourced',
    );
    if (!redefine.ok) throw new Error(JSON.stringify(redefine));
    expect(String(redefine['output'])).toMatch(/__skein_prompt: readonly function/);
    expect(String(redefine['output'])).toMatch(/PROMPT_COMMAND: readonly variable/);
    const line = `rm -f keep.txt; printf %s%s ${scene.c.halves[0]} ${scene.c.halves[1]}`;
    await oneByteReadThenWrite(line);
    for (let i = 0; i < 3; i++) await scene.exec('true');
    await new Promise((r) => setTimeout(r, 500));
    expect(existsSync(scene.keep)).toBe(true);
    await expectNoCanary(scene.rt, scene.c);
  });
});
