/**
 * The decision's edges that come from the policy-precedence mutation run (issue 10): the whitespace reading
 * of an unparseable input, and the subjects and "always" patterns at their edges. The reasons themselves are
 * permission-reasons.test.ts. And the sub-commands a decision carries, bounded.
 */
import {
  result,
  SHOWN_SUB_COMMAND_CHARS,
  SHOWN_SUB_COMMANDS,
  shownSubCommands,
} from '../../../machines/permission/permission-decision.ts';
import { decide } from '../../../machines/permission/permission-policy.ts';
import type { PathFacts } from '../../../machines/permission/permission-paths.ts';
import type { PolicyInput } from '../../../schemas/policy.ts';
import { decideTerminal, merged } from '../../support/permission-fixtures.ts';

const terminal = (t: NonNullable<PolicyInput['tools']>['terminal'], def?: 'allow' | 'deny' | 'confirm') =>
  merged({ ...(def ? { default: def } : {}), tools: { terminal: t } });

/** `rawBuiltin`: when the split of an unparseable input found no command, the built-ins read its words. */
describe('the whitespace reading of an unparseable input', () => {
  const allowAll = merged({ default: 'allow' });
  const noCommands = { commands: [], unsafe: [], parseError: 'syntax error at line 1, column 1' };
  const raw = (input: string) => decide({ tool: 'terminal', input, split: noCommands }, allowAll);

  it.each([
    'ls|rm -rf /',
    'ls&rm -rf /',
    'ls;rm -rf /',
    'ls\nrm -rf /',
    '(rm -rf /',
    'ls)rm -rf /',
    '`rm -rf /',
    '{rm -rf /',
    'ls}rm -rf /',
    'rm -rf "/"',
    "rm -rf '/'",
    'r\\m -rf /',
    '/bin/rm -rf /',
    '  rm \t -rf   /  ',
    // A word of quotes only is dropped, not read as an empty command name.
    '"" rm -rf /',
  ])('denies %j', (input) => {
    expect(raw(input)).toMatchObject({ outcome: 'deny', level: 'builtin' });
  });

  it('names the words it read', () => {
    expect(raw(' rm  -rf  "/" ').reason).toMatch(
      /^Blocked by built-in security rule: "rm -rf \/" would delete the root/,
    );
  });

  it("reads a leading -1 as kill's signal, not a process", () => {
    expect(raw('kill -1 1234').level).toBe('global_default');
    expect(raw('ls; kill -9 -1').level).toBe('builtin');
  });
});

describe('subjects and patterns at their edges', () => {
  const facts: PathFacts = { roots: ['/ws'] };

  it('a path whose raw and normalized forms are equal is listed once', () => {
    expect(decide({ tool: 'read_file', input: 'src/a.ts', path: facts }, merged({})).subCommands).toEqual(['src/a.ts']);
  });

  it('a tool judged by its input alone is allowed by a matching allow rule', () => {
    const p = merged({ tools: { spawn_agent: { always_allow: [{ pattern: '^claude\\b' }] } } });
    expect(decide({ tool: 'spawn_agent', input: 'claude -p x' }, p)).toMatchObject({
      outcome: 'allow',
      level: 'allow_rule',
    });
  });

  it('offers nothing to learn for an input too long for an exact rule', async () => {
    const d = await decideTerminal(merged({}), `echo ${'y'.repeat(5_000)}`);
    expect(d).toMatchObject({ outcome: 'confirm', patterns: [] });
  });

  it('under a deny default, a policy-naming command asks only if every form of it is allowed', async () => {
    const p = terminal({ default: 'deny', always_allow: [{ pattern: '^cp\\b' }] });
    expect((await decideTerminal(p, 'X=1 cp x .skein/policy.json')).outcome).toBe('deny');
    const q = terminal({ default: 'deny', always_allow: [{ pattern: '^(X=1 )?cp\\b' }] });
    expect((await decideTerminal(q, 'X=1 cp x .skein/policy.json')).outcome).toBe('confirm');
  });
});

describe('the sub-commands a decision carries', () => {
  it('are the split’s own when few and short', () => {
    expect(shownSubCommands(['ls', 'git status'])).toEqual(['ls', 'git status']);
  });

  it('are the first SHOWN_SUB_COMMANDS, each cut at SHOWN_SUB_COMMAND_CHARS, then how many more', () => {
    const long = 'x'.repeat(SHOWN_SUB_COMMAND_CHARS + 500);
    const texts = [long, ...Array.from({ length: SHOWN_SUB_COMMANDS + 9 }, (_, i) => `cmd ${i}`)];
    const shown = shownSubCommands(texts);
    expect(shown).toHaveLength(SHOWN_SUB_COMMANDS + 1);
    expect(shown[0]).toBe(`${'x'.repeat(SHOWN_SUB_COMMAND_CHARS - 1)}…`);
    expect(shown[1]).toBe('cmd 0');
    expect(shown.at(-1)).toBe('… and 10 more sub-commands');
    // What a decision holds (and a permission.requested fact records) is bounded whatever the split was.
    expect(result('confirm', 'expansion', 'why', texts).subCommands).toEqual(shown);
  });
});
