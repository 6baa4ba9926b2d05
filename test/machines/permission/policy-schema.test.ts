/**
 * The policy file schema: Zed-compatible keys, aliases, wrappers, and errors
 * that name the key.
 */
import { formatPolicyIssues, Policy, PolicyFile } from '../../../schemas/policy.ts';
import { permissionCommands, permissionEvents, PermissionDecide } from '../../../schemas/permission.ts';

function issues(raw: unknown): string {
  const r = PolicyFile.safeParse(raw);
  return r.success ? 'ok' : formatPolicyIssues(r.error);
}

describe('policy schema', () => {
  it('reads the Zed shape, the default_mode alias and Zed settings wrappers', () => {
    const zed = {
      agent: {
        tool_permissions: {
          default_mode: 'allow',
          tools: { terminal: { default_mode: 'deny', always_allow: [{ pattern: '^ls', case_sensitive: true }] } },
        },
      },
    };
    expect(PolicyFile.parse(zed)).toEqual({
      default: 'allow',
      tools: {
        terminal: {
          default: 'deny',
          always_allow: [{ pattern: '^ls', case_sensitive: true }],
          always_deny: [],
          always_confirm: [],
        },
      },
    });
    expect(PolicyFile.parse({ tool_permissions: { default: 'deny' } })).toEqual({ default: 'deny', tools: {} });
    expect(Policy.parse({})).toEqual({ default: undefined, tools: {} });
  });

  it('accepts and ignores the Zed tools skein does not gate (still validated)', () => {
    expect(
      PolicyFile.parse({
        tools: {
          fetch: { default: 'allow' },
          'mcp:gh:create_issue': { default: 'deny' },
          terminal: { default: 'allow' },
        },
      }),
    ).toEqual({
      default: undefined,
      tools: { terminal: { default: 'allow', always_allow: [], always_deny: [], always_confirm: [] } },
    });
    expect(issues({ tools: { fetch: { always_allow: [{ pattern: 1 }] } } })).toMatch(
      /^tools\.fetch\.always_allow\.0\.pattern: Invalid input: expected string/,
    );
  });

  it.each([
    [{ default: 'maybe' }, /^default: Invalid option: expected one of "allow"\|"deny"\|"confirm"/],
    [{ tools: { shell: {} } }, /^tools\.shell: unknown tool 'shell'; use one of terminal, terminal_input, read_file/],
    [
      { tools: { terminal: { always_allow: [{ pattern: '' }] } } },
      /^tools\.terminal\.always_allow\.0\.pattern: a rule pattern must not be empty/,
    ],
    [
      { tools: { terminal: { always_deny: [{ regex: 'x' }] } } },
      /tools\.terminal\.always_deny\.0\.pattern: .*; tools\.terminal\.always_deny\.0: Unrecognized key: "regex"/,
    ],
    [{ tools: { terminal: { allways_allow: [] } } }, /^tools\.terminal: Unrecognized key: "allways_allow"/],
    [
      { tools: { edit_file: { always_confirm: 'src' } } },
      /^tools\.edit_file\.always_confirm: Invalid input: expected array/,
    ],
    [
      { tools: { terminal: { always_allow: [{ pattern: 'x', case_sensitive: 'yes' }] } } },
      /^tools\.terminal\.always_allow\.0\.case_sensitive: Invalid input: expected boolean/,
    ],
    [[1, 2], /^\(root\): Invalid input: expected object/],
  ])('names the bad key in %j', (raw, message) => {
    expect(issues(raw)).toMatch(message);
  });

  it('exports the commands and facts of the domain', () => {
    expect(permissionCommands.map((c) => c.type)).toEqual([
      'permission.decide',
      'permission.withdraw',
      'policy.set',
      'permission.pending',
    ]);
    expect(permissionEvents.map((e) => e.type)).toEqual([
      'permission.requested',
      'permission.granted',
      'permission.denied',
      'policy.changed',
      'policy.file.rejected',
    ]);
    expect(PermissionDecide.data.safeParse({ requestId: 'r-1', decision: 'allow_sometimes' }).success).toBe(false);
  });
});
