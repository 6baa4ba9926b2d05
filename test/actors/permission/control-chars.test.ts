/**
 * Issue 11, holes 1–3 (decision side): a command or worker command line holding a control character other
 * than newline and tab is refused, naming the character and its position, whatever the policy says; and
 * plain commands that were allowed before still are (nothing legitimate is lost).
 */
import { runPolicyCheck } from '../../../infra/cli/policy-command.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decide } from '../../../machines/permission/permission-policy.ts';
import { describeChar } from '../../../machines/permission/permission-control.ts';
import type { PolicyInput } from '../../../schemas/policy.ts';
import { BYPASS_POLICY, decideTerminal, ISSUE_11_POLICY, merged } from '../../support/permission-fixtures.ts';

const ISSUE_POLICY = merged(ISSUE_11_POLICY as PolicyInput);

/** Every C0 control but LF and TAB, DEL and a C1 control. */
const CONTROLS = [
  // NUL has its own refusal (inputProblem).
  ...Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).filter((c) => c !== '\n' && c !== '\t'),
  '\x7f',
  '\u0085',
];

describe('control characters in commands', () => {
  it('names characters the way the refusal does', () => {
    expect(describeChar('\r')).toBe('U+000D CARRIAGE RETURN (Ctrl-M)');
    expect(describeChar('\x03')).toBe('U+0003 END OF TEXT (Ctrl-C)');
    expect(describeChar('\x7f')).toBe('U+007F DELETE');
  });

  it.each(CONTROLS.map((c) => [describeChar(c), c]))(
    'refuses %s in an exec command even under allow-all, naming it and its position',
    async (name, ch) => {
      const command = `echo hi${ch}touch /tmp/pwned`;
      for (const policy of [ISSUE_POLICY, merged({ default: 'allow' })]) {
        const d = await decideTerminal(policy, command);
        expect(d.outcome).toBe('deny');
        expect(d.level).toBe('input');
        expect(d.reason).toContain(`${name} at position 7`);
      }
    },
  );

  it.each(['\x03', '\x1c', '\x15', '\x17', '\x04', '\x1a', '\x0f', '\r'])(
    'refuses the worker command line `echo x%jXtouch f #` (hole 3)',
    (ch) => {
      const input = `echo x${ch}Xtouch f #`;
      const d = decide({ tool: 'spawn_agent', input }, ISSUE_POLICY);
      expect(d).toMatchObject({ outcome: 'deny', level: 'input' });
      expect(d.reason).toContain(`${describeChar(ch)} at position 6`);
      expect(d.reason).toContain('worker command line');
    },
  );

  it('keeps newlines and tabs, which bash reads as the parser does', async () => {
    expect((await decideTerminal(ISSUE_POLICY, 'ls -la\ngit status')).outcome).toBe('allow');
    expect((await decideTerminal(ISSUE_POLICY, 'echo a\tb')).outcome).toBe('allow');
    expect(decide({ tool: 'spawn_agent', input: 'echo a\tb' }, ISSUE_POLICY).outcome).toBe('allow');
  });

  // Issue 11, acceptance: plain commands allowed before are allowed now.
  it.each([
    'git status',
    'ls -la',
    'npm test',
    'git status && ls -la',
    'ls -la | ls',
    // A two-stage pipeline before a newline (three stages are misread by tree-sitter-bash: denied, see
    // shell-parse.test.ts).
    'git status | ls\nls -la && npm test',
    'ls; git status',
  ])('still allows the plain command %j under the bypass policy', async (command) => {
    expect((await decideTerminal(merged(BYPASS_POLICY), command)).outcome).toBe('allow');
  });
});

describe('skein policy check and control characters (hole 1)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'skein-control-'));
    writeFileSync(join(dir, 'policy.json'), JSON.stringify({ default: 'allow' }));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('says deny for "echo x\\rrm -rf /", naming CR and its position', async () => {
    const r = await runPolicyCheck({ policy: [join(dir, 'policy.json')], tool: 'terminal', input: 'echo x\rrm -rf /' });
    expect(r.code).toBe(4);
    expect(r.stdout).toContain('decision: deny (input)');
    expect(r.stdout).toContain('U+000D CARRIAGE RETURN (Ctrl-M) at position 6');
  });
});
