/**
 * Two lines bash reads otherwise than the gate did, found by a live review (6 December), against real
 * (sandboxed where bwrap is installed) terminals over NATS:
 *
 * - a backspace after a combining mark, typed at the prompt: readline erases a character with the zero-width
 *   ones after it, the gate's line model erased one code point. `toucX\u0301`, backspace, `h` ran `touch`
 *   where the gate judged `toucXh`; under an allow-list, `echo hi #\u0301`, backspace, `; touch …` ran touch
 *   where the gate judged `echo` and a comment.
 * - a program named by a tilde expansion: `~-` is $OLDPWD, set with no `$` by a `for` over `/usr/bin/t?uch`;
 *   the gate asks about `$OLDPWD` as a program but allowed `~-`.
 *
 * Each attack tries to create a canary with the denied `touch`; it must never appear.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { ok } from '../support/replies.ts';
import type { TestRuntime } from '../support/runtime.ts';
import {
  ALL_BUT_TOUCH_POLICY,
  attack,
  canaries,
  expectNoCanary,
  hostileRuntime,
  ISSUE_11_POLICY,
  openTerminal,
  outcome,
  reportAttacks,
  settle,
} from './support.ts';

reportAttacks('erase-and-tilde');

describe.each([
  ['everything but touch', ALL_BUT_TOUCH_POLICY],
  ['an allow-list (default deny)', ISSUE_11_POLICY],
])('under %s', (_name, policy) => {
  let rt: TestRuntime;
  let terminalId: string;
  const { fresh } = canaries(() => rt.workspace);
  beforeAll(async () => {
    // Asks go unanswered: denied after 1 s.
    rt = await hostileRuntime(policy, { domains: { permission: { timeoutMs: 1000 } } });
    terminalId = await openTerminal(rt);
  }, 60_000);
  afterAll(async () => {
    await rt?.dispose();
  });

  /** Writes `data` at the prompt; the write must be refused and the canary never made. */
  async function typed(data: (path: string) => string) {
    const k = fresh();
    const reply = await rt.call('terminal.write', { terminalId, data: data(k.path) });
    await settle(1_000, () => existsSync(k.path));
    await expectNoCanary(rt, k);
    expect(outcome(reply)).not.toBe('ok');
    // Whatever the write left on the prompt line goes before the next attack.
    await rt.call('terminal.write', { terminalId, data: '\x15' });
  }

  attack('prompt-erase', 'a backspace after a combining accent', () => typed((p) => `toucX\u0301\x7fh ${p}\r`));
  attack('prompt-erase', 'a backspace after a combining accent ending a comment', () =>
    typed((p) => `echo hi #\u0301\x7f; touch ${p}\r`),
  );
  attack('prompt-erase', 'a backspace after a zero-width joiner', () => typed((p) => `toucX\u200d\x7fh ${p}\r`));
  attack('prompt-erase', 'the accent typed in one write, the backspace in the next', async () => {
    const k = fresh();
    expect(outcome(await rt.call('terminal.write', { terminalId, data: 'echo hi #\u0301' }))).toBe('ok');
    const reply = await rt.call('terminal.write', { terminalId, data: `\x7f; touch ${k.path}\r` });
    await settle(1_000, () => existsSync(k.path));
    await expectNoCanary(rt, k);
    expect(outcome(reply)).not.toBe('ok');
    await rt.call('terminal.write', { terminalId, data: '\x15' });
  });

  for (const [name, line] of [
    ['~- set by a for loop over a glob', (p: string) => `for OLDPWD in /usr/bin/t?uch; do :; done; ~- ${p}`],
    ['~- set by printf -v', (p: string) => `printf -v OLDPWD %s /usr/bin/t?uch; ~- ${p}`],
    ['~ set by a for loop', (p: string) => `for HOME in /usr/bin/t?uch; do :; done; ~ ${p}`],
    ['~- run by env', (p: string) => `for OLDPWD in /usr/bin/t?uch; do :; done; env ~- ${p}`],
    ['~- run by command', (p: string) => `for OLDPWD in /usr/bin/t?uch; do :; done; command ~- ${p}`],
  ] as const) {
    attack('tilde-name', name, async () => {
      const k = fresh();
      const reply = await rt.call('terminal.exec', { terminalId, command: line(k.path), timeoutMs: 10_000 });
      await expectNoCanary(rt, k);
      expect(outcome(reply)).toBe('permission_denied');
    });
  }

  attack('control', 'an allowed line with an ASCII backspace still runs as typed', async () => {
    const reply = await rt.call('terminal.write', { terminalId, data: 'echo eraseX\x7fd-ok\r' });
    expect(outcome(reply)).toBe('ok');
    await expect
      .poll(async () => String(ok(await rt.call('terminal.read', { terminalId, cursor: 0 }))['output']), {
        timeout: 10_000,
      })
      .toMatch(/^erased-ok\r?$/m);
  });
});
