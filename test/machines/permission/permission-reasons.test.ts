/**
 * What each level of the decision tells the agent and the person who answers: the reason's words (what was
 * matched, which rule and layer, what to do next), the rule reported, the patterns an "always" would learn, and
 * the edges between levels that the precedence tests do not reach. Written from the policy-decision
 * mutation run (issue 10), where most survivors were reasons no test read.
 */
import { decide, decideForAgent, INPUT_LIMITS } from '../../../machines/permission/permission-policy.ts';
import { compilePolicy, type MergedPolicy } from '../../../machines/permission/policy.ts';
import type { PathFacts } from '../../../machines/permission/permission-paths.ts';
import type { PolicyInput } from '../../../schemas/policy.ts';
import { decideTerminal, merged, shellSplitter } from '../../support/permission-fixtures.ts';

const terminal = (t: NonNullable<PolicyInput['tools']>['terminal'], def?: 'allow' | 'deny' | 'confirm') =>
  merged({ ...(def ? { default: def } : {}), tools: { terminal: t } });

describe('input problems', () => {
  const p = merged({ default: 'allow' });
  it('say what is wrong and what to do, and list no sub-commands', () => {
    const reason = (input: string) => {
      const d = decide({ tool: 'read_file', input, path: { roots: ['/ws'] } }, p);
      expect(d.subCommands).toEqual([]);
      return d.reason;
    };
    expect(reason(' \t')).toBe('The input is empty; send the command or path to check.');
    expect(reason('a\0b')).toBe(
      'The input contains a NUL byte, which cannot be checked reliably; remove it and try again.',
    );
    expect(reason('x'.repeat(INPUT_LIMITS.maxChars + 1))).toBe(
      'The input is 65537 characters long, over the limit of 65536; split it into smaller calls.',
    );
  });

  it('take an input of exactly the limit, and a blank-padded one, to the rules', () => {
    const d = decide({ tool: 'spawn_agent', input: 'x'.repeat(INPUT_LIMITS.maxChars) }, p);
    expect(d).toMatchObject({ outcome: 'allow', level: 'global_default' });
    expect(decide({ tool: 'spawn_agent', input: ' x ' }, p).level).toBe('global_default');
  });

  it('a control byte is refused for terminal commands and worker command lines, naming which', () => {
    const term = decide({ tool: 'terminal', input: 'ls\x1b[A', split: { commands: [], unsafe: [] } }, p);
    expect(term).toMatchObject({ outcome: 'deny', level: 'input' });
    expect(term.reason).toMatch(/^The command /);
    expect(term.subCommands).toEqual([]);
    const worker = decide({ tool: 'spawn_agent', input: 'claude\x1b[A' }, p);
    expect(worker).toMatchObject({ outcome: 'deny', level: 'input' });
    expect(worker.reason).toMatch(/^The worker command line /);
    // A file path is not typed into a terminal.
    expect(decide({ tool: 'read_file', input: 'a\x1bb', path: { roots: ['/ws'] } }, p).level).not.toBe('input');
  });

  it('an unknown tool lists no sub-commands', () => {
    expect(decide({ tool: 'fetch' as never, input: 'x' }, p).subCommands).toEqual([]);
    expect(decide({ tool: 'terminal', input: 'ls' }, p).subCommands).toEqual([]);
  });

  it('a terminal request that was not split says how to build one', () => {
    expect(decide({ tool: 'terminal', input: 'ls' }, p).reason).toBe(
      'The terminal command was not split into sub-commands, so it cannot be checked; ' +
        'build the request with createPermissionGate (actors/policy-gate.ts).',
    );
  });
});

describe('invalid patterns and unparseable commands', () => {
  it('one bad pattern is "1 regex pattern", and the reason lists it with its error', async () => {
    const d = await decideTerminal(terminal({ always_deny: [{ pattern: '(' }] }), 'ls');
    expect(d.reason).toMatch(
      new RegExp(
        /^The terminal tool cannot run because 1 regex pattern failed to compile: "\(" \(.+\)\. /.source +
          /Please fix the invalid patterns in the policy\.$/.source,
      ),
    );
    expect(d.subCommands).toEqual(['ls']);
  });

  it('an unparseable command names the parse error and says how to rewrite it', async () => {
    const d = await decideTerminal(merged({}), 'ls "x');
    expect(d.reason).toMatch(
      new RegExp(
        /^The terminal command could not be approved because it could not be parsed \(syntax error at line 1, /.source +
          /column \d+: [^)]+\); rewrite it in plainer shell \(one command per line, quoted words\) and try again\.$/
            .source,
      ),
    );
  });

  it('only an unconditional allow-all admits an unparseable command', async () => {
    const cases: Array<[MergedPolicy, string]> = [
      [terminal({ always_deny: [{ pattern: '^nothing' }] }, 'allow'), 'unsafe_shell'],
      [terminal({ always_confirm: [{ pattern: '^nothing' }] }, 'allow'), 'unsafe_shell'],
      [terminal({ default: 'confirm' }, 'allow'), 'unsafe_shell'],
      [terminal({ default: 'allow' }, 'deny'), 'tool_default'],
      [terminal({}, 'allow'), 'global_default'],
      // Allow rules are not consulted for an unparseable command, even under an allow-all.
      [terminal({ always_allow: [{ pattern: '^ls' }] }, 'allow'), 'global_default'],
    ];
    for (const [policy, level] of cases) expect((await decideTerminal(policy, 'ls "x')).level).toBe(level);
  });

  it('an unparseable command under allow-all asks when its raw text holds any expansion', async () => {
    // The split of an unparseable input may miss what follows the error: the raw text is read instead.
    const p = merged({ default: 'allow' });
    const split = {
      commands: [{ kind: 'command' as const, text: 'echo', forms: ['echo'], argv: ['echo'] }],
      unsafe: [],
      parseError: 'syntax error at line 1, column 6',
    };
    for (const [input, shown] of [
      ['echo "x $X', '$'],
      ['echo "x `date`', '`'],
      ['echo "x <(ls)', '<('],
      ['echo "x >(ls)', '>('],
    ]) {
      const d = decide({ tool: 'terminal', input: input!, split }, p);
      expect({ input, level: d.level, reason: d.reason }).toMatchObject({
        input,
        level: 'expansion',
        reason: expect.stringContaining(`The command contains "${shown}", whose value no rule can know`),
      });
    }
    expect(decide({ tool: 'terminal', input: 'echo "x < (y) >', split }, p).level).toBe('global_default');
    // A parseable command is judged by its split alone: a quoted `$` is no expansion.
    expect((await decideTerminal(p, "echo 'cost: $5'")).level).toBe('global_default');
  });
});

describe('deny rules', () => {
  it('name the rule, its layer, the tool and what matched, and say not to retry', async () => {
    const d = await decideTerminal(terminal({ always_deny: [{ pattern: '^danger\\b' }] }), 'ls; danger now');
    expect(d).toMatchObject({
      outcome: 'deny',
      level: 'deny_rule',
      reason:
        'Denied by rule "^danger\\b" (layer0 policy) for the terminal tool: it matches "danger now". ' +
        'Do not retry it; ask the user, or use a different approach.',
      rule: { list: 'always_deny', pattern: '^danger\\b', layer: 'layer0', matched: 'danger now' },
      subCommands: ['ls', 'danger now'],
    });
  });

  it('match any form of a sub-command, and the whole input', async () => {
    const byForm = await decideTerminal(terminal({ always_deny: [{ pattern: '^danger\\b' }] }), 'X=1 danger');
    expect(byForm.rule).toMatchObject({ matched: 'danger' });
    // subCommands lists each sub-command once (its first form); a deny offers nothing to learn.
    expect(byForm).toMatchObject({ subCommands: ['X=1 danger'], patterns: [] });
    const whole = await decideTerminal(terminal({ always_deny: [{ pattern: '^ls; pwd$' }] }, 'allow'), 'ls; pwd');
    expect(whole).toMatchObject({ outcome: 'deny', rule: { matched: 'ls; pwd' } });
  });

  it('a policy without layer names reports no layer', () => {
    const bare: MergedPolicy = { tools: { read_file: { always_deny: [{ pattern: '^x' }] } } } as MergedPolicy;
    const d = decide({ tool: 'spawn_agent', input: 'x' }, bare);
    expect(d.level).toBe('global_default');
    const e = decide({ tool: 'read_file', input: 'x', path: { roots: ['/ws'] } }, bare);
    expect(e.reason).toBe(
      'Denied by rule "^x" for the read_file tool: it matches "x". ' +
        'Do not retry it; ask the user, or use a different approach.',
    );
    expect(e.rule).toStrictEqual({ list: 'always_deny', pattern: '^x', matched: 'x' });
  });

  it('clip what matched at 120 characters', async () => {
    const p = terminal({ always_deny: [{ pattern: '^echo' }] });
    const fits = `echo ${'y'.repeat(115)}`;
    expect((await decideTerminal(p, fits)).reason).toContain(`it matches "${fits}".`);
    const long = `echo ${'y'.repeat(116)}`;
    expect((await decideTerminal(p, long)).reason).toContain(`it matches "${long.slice(0, 119)}…".`);
  });
});

describe('paths and commands that always ask', () => {
  it("a command naming skein's policy asks Yes/No and says why", async () => {
    const d = await decideTerminal(merged({ default: 'allow' }), 'cp x .skein/policy.json');
    expect(d).toMatchObject({
      outcome: 'confirm',
      level: 'always_ask',
      scope: 'sensitive',
      reason:
        "`.skein/policy.json` names skein's permission policy (.skein/ or a policy file): " +
        'a command touching it always asks',
    });
  });

  it('a policy path spelled with quotes is found in the canonical text', async () => {
    const d = await decideTerminal(merged({ default: 'allow' }), 'cp x ".sk"ein/policy.json');
    expect(d).toMatchObject({ level: 'always_ask', reason: expect.stringMatching(/^`\.skein\/policy\.json` names/) });
  });

  it('under a deny default it is denied unless allow rules cover every sub-command', async () => {
    const cp = 'cp x .skein/policy.json';
    expect(await decideTerminal(merged({ default: 'deny' }), cp)).toMatchObject({
      outcome: 'deny',
      level: 'global_default',
      reason: 'terminal is disabled (default: deny).',
    });
    expect(await decideTerminal(terminal({ default: 'deny' }), cp)).toMatchObject({ level: 'tool_default' });
    const allowed = terminal({ default: 'deny', always_allow: [{ pattern: '^cp\\b' }] });
    expect(await decideTerminal(allowed, cp)).toMatchObject({ outcome: 'confirm', level: 'always_ask' });
    const half = terminal({ default: 'deny', always_allow: [{ pattern: '^cp\\b' }] });
    expect((await decideTerminal(half, `ls; ${cp}`)).outcome).toBe('deny');
    // A command of no sub-commands (a comment) has nothing an allow rule covers.
    expect((await decideTerminal(allowed, `# ${cp}`)).outcome).toBe('deny');
  });

  it('a file outside the workspace asks, and an "always" could learn nothing for it', () => {
    const facts: PathFacts = { roots: ['/ws'] };
    const d = decide({ tool: 'edit_file', input: '/etc/hosts', path: facts }, merged({}));
    expect(d).toMatchObject({ level: 'always_ask', scope: 'outside', patterns: [] });
    const c = decide({ tool: 'edit_file', input: '/etc/hosts', path: facts }, merged({ tools: { edit_file: {} } }));
    expect(c.patterns).toEqual([]);
  });
});

describe('confirm and allow rules, and the defaults', () => {
  it("a file tool's path is allowed through its forms, never by the exact rule of the raw input", () => {
    const facts: PathFacts = { roots: ['/ws'] };
    const p = merged({ tools: { edit_file: { always_allow: [{ pattern: '(?-i)^/ws/src/a\\.ts$' }] } } });
    expect(decide({ tool: 'edit_file', input: '/ws/src/a.ts', path: facts }, p)).toMatchObject({
      outcome: 'confirm',
      level: 'global_default',
      patterns: ['(?-i)^src/a\\.ts$'],
    });
  });

  it('a confirm rule names itself and what matched, and offers the exact line', async () => {
    const d = await decideTerminal(terminal({ always_confirm: [{ pattern: '^ask\\b' }] }), 'ask now');
    expect(d).toMatchObject({
      reason: 'Rule "^ask\\b" (layer0 policy) asks for confirmation: "ask now".',
      rule: { list: 'always_confirm', pattern: '^ask\\b', layer: 'layer0', matched: 'ask now' },
      patterns: ['(?-i)^ask now$'],
    });
  });

  it('a confirm rule on a later form of a sub-command still asks', async () => {
    const d = await decideTerminal(terminal({ always_confirm: [{ pattern: '^ask\\b' }] }, 'allow'), 'X=1 ask');
    expect(d).toMatchObject({ level: 'confirm_rule', rule: { matched: 'ask' } });
  });

  it('offers no pattern the allow rules already hold', async () => {
    const p = terminal({ default: 'confirm', always_allow: [{ pattern: '(?-i)^ls -l$' }] });
    expect((await decideTerminal(p, 'ls -la')).patterns).toEqual(['(?-i)^ls -la$']);
    const q = terminal({ always_confirm: [{ pattern: '^ls' }], always_allow: [{ pattern: '(?-i)^ls -l$' }] });
    expect((await decideTerminal(q, 'ls -l')).patterns).toEqual([]);
  });

  it('the learned exact rule says so and reports the whole input', async () => {
    const p = terminal({ always_allow: [{ pattern: '(?-i)^PAGER=cat git log$' }] });
    expect(await decideTerminal(p, 'PAGER=cat git log')).toMatchObject({
      level: 'allow_rule',
      reason: 'Allowed by rule "(?-i)^PAGER=cat git log$" (layer0 policy) (this exact input).',
      rule: {
        list: 'always_allow',
        pattern: '(?-i)^PAGER=cat git log$',
        layer: 'layer0',
        matched: 'PAGER=cat git log',
      },
    });
  });

  it('allow rules report the one rule, or how many sub-commands matched (pipelines not counted)', async () => {
    const p = terminal({ always_allow: [{ pattern: '^(ls|wc)\\b' }] });
    expect((await decideTerminal(p, 'ls')).reason).toBe('Allowed by rule "^(ls|wc)\\b".');
    expect((await decideTerminal(p, 'ls | wc -l')).reason).toBe(
      'Allowed: every one of 2 sub-commands matches an allow rule.',
    );
  });

  it('every form of a sub-command must match an allow rule', async () => {
    const p = terminal({ always_allow: [{ pattern: '^X=1 ls$' }] });
    expect((await decideTerminal(p, 'X=1 ls')).level).toBe('global_default');
  });

  it.each([
    [{ default: 'deny' }, 'deny', 'global_default', 'Blocked by global default: deny.'],
    [
      { tools: { terminal: { default: 'deny' } } },
      'deny',
      'tool_default',
      'terminal tool is disabled (its default is deny).',
    ],
    [{ default: 'allow' }, 'allow', 'global_default', 'Allowed by the global default.'],
    [{ tools: { terminal: { default: 'allow' } } }, 'allow', 'tool_default', 'Allowed by the tool default.'],
    [{}, 'confirm', 'global_default', 'No rule allows this terminal call; the global default is to ask.'],
    [
      { tools: { terminal: { default: 'confirm' } } },
      'confirm',
      'tool_default',
      'No rule allows this terminal call; the tool default is to ask.',
    ],
  ] as const)('default %j: %s (%s)', async (policy, outcome, level, reason) => {
    const d = await decideTerminal(merged(policy as PolicyInput), 'make');
    expect(d).toMatchObject({ outcome, level, reason });
    expect(d.patterns).toEqual(outcome === 'confirm' ? ['(?-i)^make$'] : []);
  });

  it('an expansion lists at most three of them and offers the exact line', async () => {
    const d = await decideTerminal(merged({ default: 'allow' }), 'echo $A $B $C $D');
    expect(d).toMatchObject({
      level: 'expansion',
      reason:
        'The command contains "$A", "$B", "$C", whose value no rule can know, so it needs a person\'s approval. ' +
        'To run it without asking, resolve those values first and send the literal command.',
      patterns: ['(?-i)^echo \\$A \\$B \\$C \\$D$'],
    });
    expect('rule' in d).toBe(false);
  });
});

describe('policies given compiled, terminal input, and sub-agents', () => {
  it('decides the same from a compiled policy as from the merged one', async () => {
    const p = terminal({ always_deny: [{ pattern: '^rm\\b' }] });
    const split = (await shellSplitter())('rm x');
    const fromMerged = decide({ tool: 'terminal', input: 'rm x', split }, p);
    expect(decide({ tool: 'terminal', input: 'rm x', split }, compilePolicy(p))).toEqual(fromMerged);
    expect(fromMerged.level).toBe('deny_rule');
  });

  it('terminal input is judged by its own class and as a command; the stricter wins', async () => {
    const split = (await shellSplitter())('rm x');
    const req = { tool: 'terminal_input' as const, input: 'rm x', split };
    const asInput = merged({ default: 'allow', tools: { terminal_input: { always_deny: [{ pattern: '^rm' }] } } });
    expect(decide(req, asInput)).toMatchObject({ outcome: 'deny', rule: { pattern: '^rm' } });
    const asCommand = merged({
      default: 'allow',
      tools: { terminal_input: { default: 'allow' }, terminal: { always_confirm: [{ pattern: '^rm' }] } },
    });
    expect(decide(req, asCommand)).toMatchObject({ outcome: 'confirm', level: 'confirm_rule' });
    // Without a split only the terminal_input class applies.
    expect(decide({ tool: 'terminal_input', input: 'rm x' }, asCommand)).toMatchObject({
      outcome: 'allow',
      subCommands: ['rm x'],
    });
    // Ties keep the terminal_input decision (its tool default, not the terminal's global one).
    const tie = decide(req, merged({ default: 'allow', tools: { terminal_input: { default: 'allow' } } }));
    expect(tie).toMatchObject({ outcome: 'allow', level: 'tool_default', reason: 'Allowed by the tool default.' });
  });

  it("a stricter ancestor's decision says where it came from and keeps the sub-agent's pattern", async () => {
    const split = (await shellSplitter())('make');
    const req = { tool: 'terminal' as const, input: 'make', split };
    const own = merged({ default: 'allow' });
    const parent = merged({ tools: { terminal: { always_confirm: [{ pattern: '^make' }] } } });
    const d = decideForAgent(req, own, [parent]);
    expect(d).toMatchObject({
      outcome: 'confirm',
      fromParent: true,
      reason:
        'Rule "^make" (layer0 policy) asks for confirmation: "make". ' +
        "(from the parent agent's policy, which a sub-agent cannot widen)",
      patterns: ['(?-i)^make$'],
    });
    // An ancestor that is as strict (not stricter) leaves the sub-agent's own decision.
    expect(decideForAgent(req, own)).toMatchObject({ outcome: 'allow', fromParent: false });
    const same = decideForAgent(req, merged({}), [merged({})]);
    expect(same).toMatchObject({
      fromParent: false,
      reason: 'No rule allows this terminal call; the global default is to ask.',
    });
    // A stricter ancestor's deny offers no pattern: the sub-agent's own ask keeps its exact line.
    const denied = decideForAgent(req, merged({}), [merged({ default: 'deny' })]);
    expect(denied).toMatchObject({ outcome: 'deny', fromParent: true, patterns: ['(?-i)^make$'] });
    // The ancestor's own patterns win when it has any.
    const learned = merged({ tools: { terminal: { always_allow: [{ pattern: '(?-i)^other$' }] } } });
    expect(decideForAgent(req, merged({ default: 'allow' }), [learned]).patterns).toEqual(['(?-i)^make$']);
  });
});
