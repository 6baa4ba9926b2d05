/**
 * Operator patterns that V8 would backtrack on super-linearly are refused when compiled, and the tool
 * denies naming them, as for a pattern that does not compile. Every pattern below that is refused was
 * measured in V8 first (`node -e`, 1 December): `^(\w+\s?)*$` on 30 letters and a '!' runs for minutes;
 * `\s+--force` on 32,000 spaces 1 s; the old fixture rm rule on 'rm -' and 16,000 'r' 0.4 s.
 */
import { compilePattern, compilePolicy } from '../../../machines/permission/policy.ts';
import { backtrackingRisk, compileGuardedRegex } from '../../../machines/permission/regex-backtracking.ts';
import { BYPASS_POLICY, decideTerminal, ISSUE_11_POLICY, merged } from '../../support/permission-fixtures.ts';

const EXPONENTIAL = ['^(\\w+\\s?)*$', '^(a+)+$', '^(\\d+|\\d+\\.)*$'];
const POLYNOMIAL = ['\\s+--force', '.*a.*a.*a.*x', '^rm\\b.*\\s(-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)(\\s|$)'];
/** Rules operators write, from the docs, the fixtures and Zed's defaults: all linear. */
const LINEAR = [
  '^git\\s+push\\b',
  '^rm\\s+-rf\\s+/',
  '\\bcurl\\b.*\\|&?\\s*(ba|z|da|k)?sh\\b',
  '^rm\\b.*\\s(-[a-qs-zA-QS-Z]*[rR][a-zA-Z]*|--recursive)(\\s|$)',
  '^(sudo\\s+)?npm\\s+(test|run\\s+\\w+)$',
  '\\.env\\b',
  '^src/',
  'sudo',
  '^\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}$',
  '^[a-f0-9]{40}$',
  '^git\\s{1,3}push\\b',
];

describe('backtrackingRisk', () => {
  it.each(EXPONENTIAL)('refuses %s as exponential', (source) => {
    expect(backtrackingRisk(source, 'i')).toMatch(/^can take exponential time on a long run of "/);
  });

  it.each(POLYNOMIAL)('refuses %s as polynomial', (source) => {
    expect(backtrackingRisk(source, 'i')).toMatch(/^can take polynomial time on a long run of "/);
  });

  it.each([
    // scslre alone misses all three: it analyses unbounded repetition only (V8: 26 letters, 10 s for the first).
    ['(?:a{0,100}){0,100}$', 'exponential'],
    ['[\\s\\S]{1,1000}[\\s\\S]{1,1000}x', 'polynomial'],
    ['^(a?){25}a{25}$', 'polynomial'],
  ])('refuses bounded repetition that backtracks, %s, as %s', (source, growth) => {
    expect(backtrackingRisk(source, 'i')).toMatch(new RegExp(`^can take ${growth} time`));
  });

  it('refuses a chain of optional parts and a pattern with too many repetitions, unchecked', () => {
    expect(backtrackingRisk(`${'a?'.repeat(25)}${'a'.repeat(25)}`, 'i')).toMatch(/^has 25 optional parts \(x\?\)/);
    expect(backtrackingRisk(`${'a?'.repeat(8)}b`, 'i')).toBeUndefined();
    // Listing every report of this 1.3 KB pattern took scslre 16 s; past 64 repetitions it is not analysed.
    expect(backtrackingRisk(`${'(?:xxxxx|y)*'.repeat(100)}z`, 'i')).toMatch(/^has 100 repetitions .* more than the 64/);
    expect(backtrackingRisk(`^${'[a-z]+;'.repeat(64)}$`, 'i')).toBeUndefined();
  });

  it('refuses (x|x)*y, which scslre rates polynomial though V8 takes 2 s on 26 x', () => {
    expect(backtrackingRisk('(x|x)*y', '')).toMatch(/^can take polynomial time on a long run of "xxx"/);
  });

  it.each(LINEAR)('accepts %s', (source) => {
    expect(backtrackingRisk(source, 'i')).toBeUndefined();
    expect(backtrackingRisk(source, '')).toBeUndefined();
  });

  it('names the run that triggers it and how to rewrite the pattern', () => {
    // `\s+` unanchored: every start position re-scans the run of spaces.
    expect(backtrackingRisk('\\s+--force', 'i')).toContain('a long run of "   "…');
    expect(backtrackingRisk('\\s+--force', 'i')).toContain('anchor it with ^ or remove the overlap');
    // scslre's own rewrite, when it has one: the flag class that leaves out r.
    expect(backtrackingRisk(POLYNOMIAL[2]!, 'i')).toContain(
      'an equivalent linear pattern is "^rm\\\\b.*\\\\s(-[A-QS-Z]*R',
    );
  });

  it('remembers results per source and flags, not per source alone', () => {
    // A case-sensitive [a-z]*[A-Z]* pair overlaps only under `i`.
    expect(backtrackingRisk('^x[a-z]*[A-Z]*;$', '')).toBeUndefined();
    expect(backtrackingRisk('^x[a-z]*[A-Z]*;$', 'i')).toMatch(/polynomial/);
    expect(backtrackingRisk('^x[a-z]*[A-Z]*;$', '')).toBeUndefined();
  });
});

describe('compileGuardedRegex', () => {
  it('returns the regex, the syntax error, or the risk', () => {
    const ok = compileGuardedRegex('^git\\s+push\\b', 'i');
    expect(ok).toBeInstanceOf(RegExp);
    expect((ok as RegExp).test('GIT  push origin')).toBe(true);
    expect(compileGuardedRegex('unclosed(', 'i')).toMatch(/Unterminated group/);
    expect(compileGuardedRegex('^(a+)+$', '')).toMatch(/exponential/);
  });
});

describe('in a policy', () => {
  it('every pattern of the test fixtures compiles (the old rm rule did not)', () => {
    for (const policy of [BYPASS_POLICY, ISSUE_11_POLICY]) {
      const compiled = compilePolicy(merged(policy as never));
      for (const tool of Object.values(compiled.tools)) expect(tool.invalid).toEqual([]);
    }
  });

  it('keeps a risky rule as invalid, honouring (?-i)', () => {
    expect(compilePattern('(?-i)^x[a-z]*[A-Z]*;$', false)).toBeInstanceOf(RegExp);
    expect(compilePattern('^x[a-z]*[A-Z]*;$', false)).toMatch(/polynomial/);
    expect(compilePattern('^x[a-z]*[A-Z]*;$', true)).toBeInstanceOf(RegExp);
  });

  it('denies the tool naming the rule, before it is ever matched against the attack', async () => {
    const policy = merged({
      default: 'allow',
      tools: { terminal: { always_allow: [{ pattern: EXPONENTIAL[0]! }], always_deny: [{ pattern: '^rm\\b' }] } },
    } as never);
    // 40 letters then '!': 2^40 paths for the old compiled regex; here no regex runs at all.
    const d = await decideTerminal(policy, `${'a'.repeat(40)}!`);
    expect(d.outcome).toBe('deny');
    expect(d.level).toBe('invalid_pattern');
    expect(d.reason).toContain(`"${EXPONENTIAL[0]}" (can take exponential time`);
    expect(d.reason).toContain('exponential time');
  });
});
