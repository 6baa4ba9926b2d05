/**
 * What `skein approvals --watch` shows a person for one ask (pure rendering): every field verbatim, the
 * detail under its name, and the exact rule "always" would learn, or that it is not offered.
 */
import { alwaysRule, askBlock, askLine } from '../../../infra/cli/approvals-watch.ts';
import type { PermissionRequestedData } from '../../../schemas/permission.ts';

const base = {
  requestId: 'p-1',
  agentId: 'a1',
  ancestors: ['main'],
  subCommands: [],
  deadline: '2026-12-01T05:00:00.000Z',
} as unknown as PermissionRequestedData;

const write = {
  ...base,
  tool: 'write_file',
  input: 'src/a.ts',
  reason: 'No rule allows this write_file call; the global default is to ask.',
  detail: 'export const a = 1;\nexport const b = 2;\n',
  options: [
    { id: 'allow_always:(?-i)^src/a\\.ts$', label: '…', decision: 'allow_always', pattern: '(?-i)^src/a\\.ts$' },
    { id: 'allow_once', label: 'Only this time', decision: 'allow_once' },
  ],
} as PermissionRequestedData;

describe('approvals --watch rendering', () => {
  it('shows the path, the content line by line and the exact rule "always" learns', () => {
    expect(askBlock(write, true)).toBe(
      [
        '── p-1 from a1 (write_file) ──',
        '  No rule allows this write_file call; the global default is to ask.',
        '  path:',
        '    │ src/a.ts',
        '  content:',
        '    │ export const a = 1;',
        '    │ export const b = 2;',
        '    │ ',
        '  always would learn: write_file.always_allow "(?-i)^src/a\\\\.ts$"',
        '  denied automatically at 2026-12-01T05:00:00.000Z',
      ].join('\n'),
    );
    expect(askBlock(write, false)).toContain('only an answer as the root learns a rule');
  });

  it('says when "always" is not offered, and prints one JSON line without a TTY', () => {
    const sensitive = { ...write, input: '.skein/policy.json', options: [] } as PermissionRequestedData;
    expect(alwaysRule(sensitive)).toBeUndefined();
    expect(askBlock(sensitive, true)).toContain('always: not offered for this request (yes or no only)');
    expect(JSON.parse(askLine(write))).toEqual({
      requestId: 'p-1',
      agentId: 'a1',
      tool: 'write_file',
      input: 'src/a.ts',
      reason: write.reason,
      detail: write.detail,
      always: '(?-i)^src/a\\.ts$',
      deadline: write.deadline,
    });
    expect(askLine(write)).not.toContain('\n');
  });
  it('lists the sub-commands as a JSON list: one of them may be a pipeline itself', () => {
    const ask = {
      ...base,
      tool: 'terminal',
      input: 'echo hi | wc -c; ls',
      reason: 'asks',
      subCommands: ['echo hi | wc -c', 'ls'],
      options: [],
    } as unknown as PermissionRequestedData;
    expect(askBlock(ask, true)).toContain('  sub-commands: ["echo hi | wc -c","ls"]');
  });
});
