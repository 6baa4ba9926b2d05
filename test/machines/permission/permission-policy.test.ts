/**
 * The decision function: precedence (every level against every other), the
 * Zed edge cases, bad inputs, and file-tool paths (raw + normalized, most
 * restrictive; always-ask paths).
 */
import { decide, INPUT_LIMITS, type DecisionLevel } from '../../../machines/permission/permission-policy.ts';
import type { PathFacts } from '../../../machines/permission/permission-paths.ts';
import type { PolicyInput } from '../../../schemas/policy.ts';
import { exactRule } from '../../../machines/permission/permission-patterns.ts';
import { decideTerminal, merged } from '../../support/permission-fixtures.ts';

type Level = Exclude<DecisionLevel, 'input' | 'always_ask'>;
const ORDER: Level[] = [
  'builtin',
  'invalid_pattern',
  'unsafe_shell',
  'deny_rule',
  'confirm_rule',
  'expansion',
  'allow_rule',
  'tool_default',
  'global_default',
];

/** What each level adds to the input and to the policy, so any two can be combined. */
type Rules = Array<{ pattern: string }>;
type Draft = {
  default?: string;
  tools: { terminal: { default?: string; always_allow: Rules; always_deny: Rules; always_confirm: Rules } };
};
const PART: Record<Level, { command?: string; policy: (p: Draft) => void }> = {
  builtin: { command: 'rm -rf /', policy: () => {} },
  invalid_pattern: { policy: (p) => p.tools.terminal.always_confirm!.push({ pattern: 'unclosed(' }) },
  unsafe_shell: { command: 'ls "unterminated', policy: () => {} },
  deny_rule: { command: 'danger now', policy: (p) => p.tools.terminal.always_deny!.push({ pattern: '^danger\\b' }) },
  confirm_rule: { command: 'ask now', policy: (p) => p.tools.terminal.always_confirm!.push({ pattern: '^ask\\b' }) },
  expansion: { command: 'echo $HOME', policy: () => {} },
  allow_rule: {
    command: 'safe now',
    policy: (p) => p.tools.terminal.always_allow!.push({ pattern: '^(safe|ask|danger|echo|other)\\b' }),
  },
  tool_default: {
    policy: (p) => {
      p.tools.terminal.default = 'confirm';
    },
  },
  global_default: {
    policy: (p) => {
      p.default = 'deny';
    },
  },
};

const OUTCOME: Record<Level, string> = {
  builtin: 'deny',
  invalid_pattern: 'deny',
  unsafe_shell: 'deny',
  deny_rule: 'deny',
  confirm_rule: 'confirm',
  expansion: 'confirm',
  allow_rule: 'allow',
  tool_default: 'confirm',
  global_default: 'deny',
};

function build(levels: Level[]) {
  const policy: Draft = { tools: { terminal: { always_allow: [], always_deny: [], always_confirm: [] } } };
  for (const l of levels) PART[l].policy(policy);
  const commands = levels.map((l) => PART[l].command).filter((c): c is string => !!c);
  return {
    policy: merged(JSON.parse(JSON.stringify(policy)) as PolicyInput),
    input: commands.length ? commands.join('; ') : 'other',
  };
}

const pairs: Array<[Level, Level]> = [];
for (let i = 0; i < ORDER.length; i++) for (let j = i + 1; j < ORDER.length; j++) pairs.push([ORDER[i]!, ORDER[j]!]);
// An expansion asks instead of allowing; a default of deny still denies it (see 'expansions' below).
const EXCEPT = new Set(['expansion/global_default']);

describe('precedence: every level against every lower one', () => {
  it.each(pairs.filter(([h, l]) => !EXCEPT.has(`${h}/${l}`)))('%s beats %s', async (high, low) => {
    const { policy, input } = build([high, low]);
    const d = await decideTerminal(policy, input);
    expect({ level: d.level, outcome: d.outcome }).toEqual({ level: high, outcome: OUTCOME[high] });
  });

  it.each(ORDER)('%s alone decides', async (level) => {
    const { policy, input } = build([level]);
    const d = await decideTerminal(policy, input);
    // Alone, tool_default (confirm) and allow_rule need nothing else; global_default alone is deny.
    expect({ level: d.level, outcome: d.outcome }).toEqual({ level, outcome: OUTCOME[level] });
  });
});

describe('Zed edge cases', () => {
  it('an expansion hiding a confirm rule still asks, never allowed', async () => {
    // The attack: `git $X` with X=push reads as `git <something>` to the rule, runs as `git push`.
    const p = merged({ default: 'allow', tools: { terminal: { always_confirm: [{ pattern: '^git\\s+push' }] } } });
    for (const input of ['X=push; git $X', 'git ${X:-push}', 'git $(echo push)', 'git `echo push`']) {
      const d = await decideTerminal(p, input);
      expect({ input, outcome: d.outcome, level: d.level }).toEqual({ input, outcome: 'confirm', level: 'expansion' });
    }
    expect((await decideTerminal(p, 'git push')).outcome).toBe('confirm');
    expect((await decideTerminal(p, 'git status')).outcome).toBe('allow');
    // Nor is it an allow-all that would admit an unparseable command (only an unconditional allow-all does).
    expect((await decideTerminal(p, 'git push "unterminated')).outcome).toBe('deny');
    expect((await decideTerminal(merged({ default: 'allow' }), 'git push "unterminated')).outcome).toBe('allow');
  });

  it(
    'a global allow does not bypass deny or confirm ' + 'rules; a tool confirm default overrides a global allow',
    async () => {
      const p = merged({
        default: 'allow',
        tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }], always_confirm: [{ pattern: '^git\\s+push' }] } },
      });
      expect((await decideTerminal(p, 'rm x')).outcome).toBe('deny');
      expect((await decideTerminal(p, 'git push')).outcome).toBe('confirm');
      expect((await decideTerminal(p, 'ls')).outcome).toBe('allow');
      const q = merged({ default: 'allow', tools: { terminal: { default: 'confirm' } } });
      expect((await decideTerminal(q, 'ls')).level).toBe('tool_default');
    },
  );

  it('is case-insensitive unless case_sensitive, and honours a leading (?i)/(?-i)', async () => {
    const p = merged({
      tools: {
        terminal: {
          always_deny: [{ pattern: '^git\\s+PUSH', case_sensitive: true }, { pattern: '(?-i)^Make\\b' }],
          always_allow: [{ pattern: '^GIT\\b' }, { pattern: '^make\\b' }],
        },
      },
    });
    expect((await decideTerminal(p, 'git push')).outcome).toBe('allow');
    expect((await decideTerminal(p, 'git PUSH')).outcome).toBe('deny');
    expect((await decideTerminal(p, 'make all')).outcome).toBe('allow');
    expect((await decideTerminal(p, 'Make all')).outcome).toBe('deny');
  });

  it('names every pattern that does not compile', async () => {
    const p = merged({
      tools: { terminal: { always_allow: [{ pattern: '[' }, { pattern: '^ok' }, { pattern: '(?<x' }] } },
    });
    const d = await decideTerminal(p, 'ok');
    expect(d.outcome).toBe('deny');
    expect(d.reason).toMatch(
      new RegExp(
        '^The terminal tool cannot run because 2 regex patterns failed to compile: ' +
          /"\[" \(.*\), "\(\?<x" \(.*\)\. Please fix/.source,
      ),
    );
    // Other tools are unaffected by the terminal's bad patterns.
    expect(decide({ tool: 'spawn_agent', input: 'x' }, p).level).toBe('global_default');
  });

  it('requires every sub-command to match an allow rule and reports the rule', async () => {
    const p = merged({ tools: { terminal: { always_allow: [{ pattern: '^ls\\b' }, { pattern: '^pwd$' }] } } });
    const one = await decideTerminal(p, 'ls -la');
    expect(one).toMatchObject({
      outcome: 'allow',
      level: 'allow_rule',
      rule: { list: 'always_allow', pattern: '^ls\\b', matched: 'ls -la' },
      subCommands: ['ls -la'],
    });
    const both = await decideTerminal(p, 'ls && pwd');
    expect(both).toMatchObject({ outcome: 'allow', subCommands: ['ls', 'pwd'] });
    const notAll = await decideTerminal(p, 'ls && whoami');
    expect(notAll).toMatchObject({ outcome: 'confirm', level: 'global_default', patterns: ['(?-i)^ls && whoami$'] });
  });

  it('learns the exact command line for "always", and that rule allows only that line', async () => {
    const p = merged({});
    expect((await decideTerminal(p, 'cargo build --release')).patterns).toEqual(['(?-i)^cargo build --release$']);
    expect((await decideTerminal(p, './run.sh x')).patterns).toEqual(['(?-i)^\\./run\\.sh x$']);
    const learned = merged({ tools: { terminal: { always_allow: [{ pattern: '(?-i)^PAGER=cat git log$' }] } } });
    expect((await decideTerminal(learned, 'PAGER=cat git log')).outcome).toBe('allow');
    expect((await decideTerminal(learned, 'PAGER=cat git log -3')).outcome).toBe('confirm');
    expect((await decideTerminal(learned, 'PAGER=cat git log; rm -r x')).outcome).toBe('confirm');
  });
});

describe('bad inputs', () => {
  const p = merged({ default: 'allow' });
  it.each([
    ['empty', '', /empty/],
    ['blank', '   \n', /empty/],
    ['NUL byte', 'ls\0 -la', /NUL byte/],
    ['huge', 'x'.repeat(INPUT_LIMITS.maxChars + 1), /over the limit of 65536/],
  ])('denies %s input before anything else', async (_name, input, reason) => {
    const d = await decideTerminal(p, input);
    expect({ outcome: d.outcome, level: d.level }).toEqual({ outcome: 'deny', level: 'input' });
    expect(d.reason).toMatch(reason);
    expect(decide({ tool: 'edit_file', input, path: { roots: ['/ws'] } }, p).level).toBe('input');
  });

  it('denies an unknown tool, and a terminal request that was not split', () => {
    expect(decide({ tool: 'fetch' as never, input: 'x' }, p)).toMatchObject({
      outcome: 'deny',
      level: 'input',
      reason:
        "Unknown tool 'fetch'; the gated tools are terminal, " +
        'terminal_input, read_file, edit_file, write_file, spawn_agent.',
    });
    expect(decide({ tool: 'terminal', input: 'ls' }, p)).toMatchObject({ outcome: 'deny', level: 'unsafe_shell' });
  });

  it('denies a command that does not parse, naming the error, unless the policy allows everything', async () => {
    const d = await decideTerminal(
      merged({ tools: { terminal: { always_allow: [{ pattern: '.*' }] } } }),
      'ls "unterminated',
    );
    expect(d.level).toBe('unsafe_shell');
    expect(d.reason).toMatch(/could not be parsed \(syntax error at line 1/);
  });
});

describe('file tools', () => {
  const facts: PathFacts = {
    roots: ['/ws'],
    sensitive: ['/ws/.skein/policy.json', '/home/u/.config/skein/policy.json'],
  };
  const p = merged({
    tools: {
      edit_file: {
        always_deny: [{ pattern: '^\\.zed/' }, { pattern: '^secrets/' }],
        always_confirm: [{ pattern: '^migrations/' }],
        always_allow: [{ pattern: '^src/' }, { pattern: '^\\.git/' }, { pattern: '^\\.skein/' }, { pattern: '^docs/' }],
      },
    },
  });
  const cases: Array<[string, string, string]> = [
    ['src/a.ts', 'allow', 'allow_rule'],
    ['/ws/src/a.ts', 'allow', 'allow_rule'],
    ['src/../.zed/settings.json', 'deny', 'deny_rule'],
    ['/ws/src/../secrets/key', 'deny', 'deny_rule'],
    ['./src/./a.ts', 'allow', 'allow_rule'],
    ['src/../migrations/1.sql', 'confirm', 'confirm_rule'],
    ['docs/../src/x.ts', 'allow', 'allow_rule'],
    ['src/../README.md', 'confirm', 'global_default'],
    ['.git/config', 'confirm', 'always_ask'],
    ['src/../.GIT/hooks/pre-commit', 'confirm', 'always_ask'],
    ['.skein/policy.json', 'confirm', 'always_ask'],
    ['src/../../etc/passwd', 'confirm', 'always_ask'],
    ['/etc/passwd', 'confirm', 'always_ask'],
    ['/home/u/.config/skein/policy.json', 'confirm', 'always_ask'],
  ];
  it.each(cases)('%s → %s (%s)', (path, outcome, level) => {
    const d = decide({ tool: 'edit_file', input: path, path: facts }, p);
    expect({ outcome: d.outcome, level: d.level }).toEqual({ outcome, level });
  });

  it('checks the raw and the normalized path and keeps the most restrictive', () => {
    const raw = merged({
      tools: { read_file: { always_deny: [{ pattern: '\\.\\./' }], always_allow: [{ pattern: '.*' }] } },
    });
    expect(decide({ tool: 'read_file', input: 'src/../x.ts', path: facts }, raw)).toMatchObject({
      outcome: 'deny',
      subCommands: ['x.ts', 'src/../x.ts'],
    });
  });

  it('offers only Yes/No scope and no patterns for always-ask paths; the exact path otherwise', () => {
    expect(decide({ tool: 'edit_file', input: '.git/config', path: facts }, p)).toMatchObject({
      scope: 'sensitive',
      reason: '`.git/config` is inside a protected directory (.git or .skein)',
    });
    expect(decide({ tool: 'edit_file', input: 'lib/util/x.ts', path: facts }, p).patterns).toEqual([
      '(?-i)^lib/util/x\\.ts$',
    ]);
    expect(decide({ tool: 'edit_file', input: '/ws/README.md', path: facts }, p).patterns).toEqual([
      '(?-i)^README\\.md$',
    ]);
  });

  it('a symlink that resolves outside always asks, even when allowed', () => {
    const d = decide({ tool: 'edit_file', input: 'src/link', path: { ...facts, resolved: '/etc/shadow' } }, p);
    expect(d).toMatchObject({
      outcome: 'confirm',
      level: 'always_ask',
      scope: 'symlink',
      reason: '`src/link` points outside the project (symlink to `/etc/shadow`)',
    });
  });

  it('a deny default still denies sensitive paths that no rule allows', () => {
    const q = merged({ tools: { write_file: { default: 'deny' } } });
    expect(decide({ tool: 'write_file', input: '.git/config', path: facts }, q).outcome).toBe('deny');
  });
});

/** Issue 14, "$VAR in docs and behaviour": an expansion goes to a person, never to an allow rule or default. */
describe('expansions', () => {
  const SHAPES = [
    'echo $HOME',
    'echo ${HOME}',
    'echo $(date)',
    'echo `date`',
    'cat <(ls)',
    'read -p "name? " ans; echo $ans',
  ];
  const POLICIES: Array<[string, PolicyInput, { outcome: string; level: string }]> = [
    ['default allow', { default: 'allow' }, { outcome: 'confirm', level: 'expansion' }],
    ['tool default allow', { tools: { terminal: { default: 'allow' } } }, { outcome: 'confirm', level: 'expansion' }],
    ['default confirm', { default: 'confirm' }, { outcome: 'confirm', level: 'expansion' }],
    [
      'allow rules covering every command',
      { tools: { terminal: { always_allow: [{ pattern: '^(echo|cat|read)\\b' }] } } },
      { outcome: 'confirm', level: 'expansion' },
    ],
    [
      'a deny rule',
      { default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^(echo|cat)\\b' }] } } },
      { outcome: 'deny', level: 'deny_rule' },
    ],
    [
      'a confirm rule',
      { default: 'allow', tools: { terminal: { always_confirm: [{ pattern: '^(echo|cat)\\b' }] } } },
      { outcome: 'confirm', level: 'confirm_rule' },
    ],
    ['default deny', { default: 'deny' }, { outcome: 'deny', level: 'global_default' }],
  ];
  const rows = SHAPES.flatMap((input) => POLICIES.map(([name, policy, want]) => [input, name, policy, want] as const));

  it.each(rows)('%s under %s', async (input, _name, policy, want) => {
    const d = await decideTerminal(merged(policy), input);
    expect({ outcome: d.outcome, level: d.level }).toEqual(want);
    if (d.outcome === 'confirm') expect(d.patterns).toEqual([exactRule(input)]);
  });

  it('built-ins still deny an expansion', async () => {
    const d = await decideTerminal(merged({ default: 'allow' }), 'rm -rf $HOME');
    expect(d).toMatchObject({ outcome: 'deny', level: 'builtin' });
  });

  it('an "always" for an expansion learns the exact command string, which allows that string only', async () => {
    const input = 'read -p "name? " ans; echo $ans';
    const p = merged({ tools: { terminal: { always_allow: [{ pattern: exactRule(input)! }] } } });
    expect(await decideTerminal(p, input)).toMatchObject({ outcome: 'allow', level: 'allow_rule', patterns: [] });
    for (const sibling of [`${input}; id`, 'read -p "name? " ans; echo $ans2', 'READ -p "name? " ans; echo $ans']) {
      expect((await decideTerminal(p, sibling)).outcome).toBe('confirm');
    }
    // A deny rule still wins over the learned exact rule.
    const q = merged({
      tools: { terminal: { always_allow: [{ pattern: exactRule(input)! }], always_deny: [{ pattern: '^read\\b' }] } },
    });
    expect((await decideTerminal(q, input)).outcome).toBe('deny');
  });

  it('an unparseable command with an expansion asks even under an allow-all policy', async () => {
    const p = merged({ default: 'allow' });
    expect((await decideTerminal(p, 'echo $(date) "unterminated')).outcome).toBe('confirm');
    expect((await decideTerminal(p, 'echo "unterminated')).outcome).toBe('allow');
  });
});

/** Issue 14: policy files are reloaded when they change, so a shell command must not rewrite them unasked. */
describe('shell commands naming the policy files always ask', () => {
  const allowAll = merged({ default: 'allow', tools: { terminal: { always_allow: [{ pattern: '.*' }] } } });
  it.each([
    `echo '{"default":"allow"}' > .skein/policy.json`,
    'cp /tmp/p.json .skein/policy.json',
    'cp /tmp/p.json ./.SKEIN/policy.json',
    'cd .skein && cp /tmp/p.json policy.json',
    'cp /tmp/p.json .sk*/policy.json',
    'cp /tmp/p.json .s?ein/policy.json',
    'rm -f .skein/policy.json',
    "cp /tmp/p.json '.skein/policy.json'",
    'tee ~/.config/skein/policy.json < /tmp/p.json',
    'mv /tmp/p.json "$HOME/.config/sk*/policy.json"',
  ])('%s', async (input) => {
    const d = await decideTerminal(allowAll, input);
    expect({ outcome: d.outcome, level: d.level, scope: d.scope, patterns: d.patterns }).toEqual({
      outcome: 'confirm',
      level: 'always_ask',
      scope: 'sensitive',
      patterns: [],
    });
  });

  it('a deny rule or a deny default still denies; other paths are not affected', async () => {
    const deny = merged({ default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^cp\\b' }] } } });
    expect((await decideTerminal(deny, 'cp x .skein/policy.json')).outcome).toBe('deny');
    expect((await decideTerminal(merged({ default: 'deny' }), 'cp x .skein/policy.json')).outcome).toBe('deny');
    expect((await decideTerminal(allowAll, 'cp x skein.json')).outcome).toBe('allow');
    expect((await decideTerminal(allowAll, 'cat docs/skein/notes.md')).outcome).toBe('allow');
  });
});
