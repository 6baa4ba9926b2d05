/**
 * The line skein types for every command (`\. <its file>`, read by readline through the terminal's line
 * discipline), turned into another command by state an earlier command left, live: a real runtime and a sandboxed
 * bash, an allowing default with one deny rule on rm, and a file in the workspace each attack tries to remove.
 * A key bound to a macro (`bind '"\C-m": "…rm…\C-j"'`), the kill character set to a byte of the typed line
 * (`stty kill -`: readline discards what came before it, and the rest names a script the agent planted), and a
 * terminal opened with INPUTRC naming a file of such bindings: each ran rm in place of the next command judged
 * (`true`) before. Now each asks (nobody answers: refused), the next command runs as judged, and a canary never
 * appears; listing bindings and reading the terminal's settings still run.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { attack, expectNoCanary, keepFileScene, outcome, reportAttacks } from './support.ts';

const POLICY = { default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } };

// Each attack asks; nobody answers, and the ask is refused after 1 s.
const scene = keepFileScene(POLICY, { domains: { permission: { timeoutMs: 1000 } } });
reportAttacks('readline-state');

/** The attack is refused, and the command after it runs as judged with keep.txt in place. */
async function refusedThenHarmless(command: string): Promise<void> {
  expect(outcome(await scene.exec(command))).toBe('permission_denied');
  const next = await scene.exec('true');
  expect({ outcome: outcome(next), exitCode: next.ok ? next['exitCode'] : undefined }).toEqual({
    outcome: 'ok',
    exitCode: 0,
  });
  expect(existsSync(scene.keep)).toBe(true);
}

describe('the next typed line, rewritten by an earlier command', () => {
  for (const command of [
    `bind '"\\C-m": "\\C-a\\C-krm -f keep.txt\\C-j"'`,
    `bind 'Control-m: "\\C-a\\C-krm -f keep.txt\\C-j"'`,
    `bind '"\\\\.": "rm -f keep.txt #"'`,
    `nice bind '"\\C-u": "rm -f keep.txt\\C-j"'`,
    'bind -f ./bindings',
  ]) {
    attack('readline', command, () => refusedThenHarmless(command));
  }

  attack('tty', 'the kill character cuts the typed line to a planted script', async () => {
    const ps = await scene.exec('ps -eo args');
    const dir = /\/tmp\/skein-([A-Za-z0-9]+)\/bashrc/.exec(String(ps.ok ? ps['output'] : ''))?.[1];
    expect(dir).toBeDefined();
    const { halves, path } = scene.c;
    const plant = await scene.exec(
      `mkdir -p ${dir} && printf '#!/bin/sh\\nrm -f keep.txt; printf %%s%%s ${halves[0]} ${halves[1]} > ${path}\\n' ` +
        `> ${dir}/c && chmod +x ${dir}/c`,
    );
    expect(outcome(plant)).toBe('ok');
    for (const command of ['stty kill -', 'env stty intr - noflsh', 'stty werase /'])
      await refusedThenHarmless(command);
    await expectNoCanary(scene.rt, scene.c);
  });

  attack('readline', 'a terminal opened with INPUTRC naming key bindings', async () => {
    const file = join(scene.rt.workspace, 'bindings');
    writeFileSync(file, '"\\C-m": "\\C-a\\C-krm -f keep.txt\\C-j"\n');
    const open = await scene.rt.call('terminal.open', { env: { INPUTRC: file } });
    expect(outcome(open)).toBe('permission_denied');
    expect(existsSync(scene.keep)).toBe(true);
  });

  attack('readline', 'a terminal opened with HOME at a workspace holding an .inputrc', async () => {
    writeFileSync(join(scene.rt.workspace, '.inputrc'), '"\\C-m": "\\C-a\\C-krm -f keep.txt\\C-j"\n');
    const open = await scene.rt.call('terminal.open', { env: { HOME: scene.rt.workspace } });
    expect(outcome(open)).toBe('ok');
    const terminalId = String(open.ok ? open['terminalId'] : '');
    const first = await scene.rt.call('terminal.exec', { terminalId, command: 'echo judged', timeoutMs: 10_000 });
    expect(String(first.ok ? first['output'] : '')).toContain('judged');
    expect(existsSync(scene.keep)).toBe(true);
  });

  // The typed line names the command file through the rc's read-only variable (`\\. "$__sk"`): pointing it at a
  // planted script, or splitting it with IFS, would run that script (or nothing) in place of the next command.
  attack('variable', 'the command file variable pointed at a planted script, or split by IFS', async () => {
    const { halves, path } = scene.c;
    const plant = await scene.exec(
      `printf 'rm -f keep.txt; printf %%s%%s ${halves[0]} ${halves[1]} > ${path}\\n' > evil.sh && echo planted`,
    );
    expect(String(plant.ok ? plant['output'] : '')).toContain('planted');
    for (const command of [
      '__sk=./evil.sh',
      'declare __sk=./evil.sh',
      'export __sk=./evil.sh',
      'readonly __sk=./evil.sh',
      'unset __sk; __sk=./evil.sh',
      'unset -v __sk',
      'declare -n __sk=HOME',
      'IFS=/._-k',
      "IFS=$'\\x01'/",
    ]) {
      const reply = await scene.exec(command);
      expect({ command, outcome: outcome(reply) }).toEqual({ command, outcome: 'ok' });
      const next = await scene.exec('echo judged');
      expect({
        command,
        output: String(next.ok ? next['output'] : '').trim(),
        exitCode: next.ok ? next['exitCode'] : undefined,
      }).toEqual({
        command,
        output: 'judged',
        exitCode: 0,
      });
    }
    expect(existsSync(scene.keep)).toBe(true);
    await expectNoCanary(scene.rt, scene.c);
  });

  it('listing bindings and reading the settings still run', async () => {
    for (const command of ['bind -p | grep -c accept-line', 'stty -a | grep -c speed', 'stty size', 'bind -q abort']) {
      const reply = await scene.exec(command);
      expect({ command, outcome: outcome(reply) }).toEqual({ command, outcome: 'ok' });
    }
  });
});
