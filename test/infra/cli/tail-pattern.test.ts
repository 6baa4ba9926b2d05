/**
 * `skein tail <pattern>` (README walk-through): a pattern that is not a subject, or lies outside the facts'
 * subjects, hung (private broker: after `illegal subject`; embedded: "tailing a b", forever). It is now
 * refused before connecting.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkTailPattern } from '../../../infra/cli/tail.ts';
import { runCli } from '../../support/cli.ts';

describe('checkTailPattern', () => {
  it.each([
    ['a b', 'holds whitespace (a subject has none)'],
    ['skein..evt', 'has an empty token (two dots in a row, or a dot at an end)'],
    ['skein.evt.', 'has an empty token (two dots in a row, or a dot at an end)'],
    ['skein.>.evt', "has '>' before its last token (it must come last)"],
    ['skein.evt.ma*', "has '*' or '>' inside a token (a wildcard is a token of its own)"],
    ['$SYS.>', "does not start with 'skein.'"],
    ['skein', "does not start with 'skein.'"],
    ['>', "does not start with 'skein.'"],
    ['skein.cmd.>', "matches no facts ('skein.cmd' subjects are not facts)"],
  ])('refuses %j: %s', (pattern, why) => {
    expect(() => checkTailPattern(pattern)).toThrow(
      `tail pattern '${pattern}' ${why}; tail prints facts: try 'skein.evt.>' (every fact), 'skein.evt.main.>'`,
    );
  });

  it.each(['skein.evt.>', 'skein.out.>', 'skein.evt.main.>', 'skein.evt.*.terminal.>', 'skein.>', 'skein.*.main.>'])(
    'accepts %j',
    (pattern) => {
      expect(() => checkTailPattern(pattern)).not.toThrow();
    },
  );
});

describe('skein tail <bad pattern> (real CLI)', () => {
  it('exits 2 at once, naming the pattern, before looking for a runtime', async () => {
    const data = mkdtempSync(join(tmpdir(), 'skein-tail-'));
    try {
      for (const pattern of ['a b', '$SYS.>']) {
        const out = await runCli(['tail', pattern, '--data', data], { timeoutMs: 15_000 });
        expect(out.code, out.stderr).toBe(2);
        expect(out.stdout).toBe('');
        expect(out.stderr).toMatch(new RegExp(`^skein: tail pattern '${pattern.replace(/[$.>]/g, '\\$&')}' `));
        expect(out.stderr).not.toContain('tailing');
      }
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
