/**
 * `enable` against skein's shell, live over NATS with real (sandboxed where bwrap is installed) terminals. The
 * rc's prompt function discards input a command left unread (typeahead) with `builtin read`, prints the end mark
 * with `builtin printf` and keeps the exit status with `local`; every command runs through the `.` builtin.
 * Functions by those names are refused (`shadowProblem`), but `enable -n read` turned the same builtin off: found
 * by a review (6 December), under a policy that allows all but `touch`, a `touch` typed ahead behind `cat` then
 * ran at the prompt, unjudged. `enable -f` loads a shared object into the shell as a builtin: code the check
 * never sees, in the process that prints the marks. Each attack tries to create a canary with the denied
 * command; it must never appear.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { TestRuntime } from '../support/runtime.ts';
import {
  ALL_BUT_TOUCH_POLICY,
  attack,
  canaries,
  expectNoCanary,
  hostileRuntime,
  outcome,
  reportAttacks,
  settle,
  type Canary,
} from './support.ts';

let rt: TestRuntime;
const { fresh } = canaries(() => rt.workspace);

beforeAll(async () => {
  rt = await hostileRuntime(ALL_BUT_TOUCH_POLICY, { domains: { permission: { timeoutMs: 1000 } } });
}, 60_000);
afterAll(async () => {
  await rt?.dispose();
});
reportAttacks('builtin-disable');

async function terminal(): Promise<string> {
  const open = await rt.call('terminal.open', {});
  if (!open.ok) throw new Error(JSON.stringify(open));
  return String(open['terminalId']);
}

/**
 * The typeahead attack of hole 5 (shell.integration.test.ts) on `terminal`: `cat` runs, Ctrl-D ends it with
 * `touch <canary>` left behind it, and an allowed `ls` typed at the prompt completes the line. With the drain
 * working, the left text is discarded and `ls` runs alone.
 */
async function typeAhead(t: string, k: Canary): Promise<void> {
  expect(outcome(await rt.call('terminal.exec', { terminalId: t, command: 'cat', yieldMs: 300 }))).toBe('ok');
  await rt.call('terminal.write', { terminalId: t, data: `\x04touch ${k.path}` });
  await settle(500);
  await rt.call('terminal.write', { terminalId: t, data: 'ls\r' });
  await settle(800, () => existsSync(`${k.path}ls`));
}

describe('enable: a builtin the shell integration relies on, turned off or replaced', () => {
  for (const command of [
    'enable -n read',
    'enable -n builtin',
    'enable -n printf local',
    'enable -n .',
    'enable -nd source',
    "'enable' -n read",
    "en''able -n read",
    'enable -"n" read',
    'builtin enable -n read',
    'command enable -n -- read',
    'true && enable -n read',
    "eval 'enable -n read'",
    'enable -f ./x.so read',
    'enable -d read',
  ]) {
    attack('enable', `${command}, then a denied command typed ahead behind cat`, async () => {
      const k = fresh();
      const t = await terminal();
      const r = await rt.call('terminal.exec', { terminalId: t, command, timeoutMs: 5_000 });
      expect(outcome(r), JSON.stringify(r)).toBe('permission_denied');
      if (!r.ok) expect(r.error.message).toMatch(/enable -[ndf]|eval/);
      await typeAhead(t, k);
      const next = await rt.call('terminal.exec', { terminalId: t, command: 'echo still judged', timeoutMs: 5_000 });
      expect(String(next.ok ? next['output'] : JSON.stringify(next))).toContain('still judged');
      await rt.call('terminal.close', { terminalId: t });
      await expectNoCanary(rt, k, [`${k.path}ls`]);
    });
  }

  attack('enable', 'the same typeahead with the builtins untouched, and enable that lists or enables', async () => {
    const k = fresh();
    const t = await terminal();
    for (const command of ['enable -p', 'enable -a', 'enable echo', 'enable -s', 'enable -- -n', 'enable read -n']) {
      const r = await rt.call('terminal.exec', { terminalId: t, command, timeoutMs: 5_000 });
      expect(outcome(r), `${command}: ${JSON.stringify(r)}`).toBe('ok');
    }
    await typeAhead(t, k);
    await rt.call('terminal.close', { terminalId: t });
    await expectNoCanary(rt, k, [`${k.path}ls`]);
  });
});
