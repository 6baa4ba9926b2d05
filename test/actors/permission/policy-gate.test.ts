/**
 * The gate: builds decision requests (real splitter) for terminal input and
 * file tools.
 */
import { createPermissionGate } from '../../../actors/permission/policy-gate.ts';
import type { classifyTerminalInput } from '../../../machines/permission/permission-input.ts';
import { decide } from '../../../machines/permission/permission-policy.ts';
import { merged, shellSplitter } from '../../support/permission-fixtures.ts';

describe('gate for terminal input', () => {
  const policy = merged({
    tools: {
      terminal: { always_allow: [{ pattern: '^ls\\b' }], always_deny: [{ pattern: '^rm\\b' }] },
      terminal_input: { always_allow: [{ pattern: '^print\\(' }] },
    },
  });

  it(
    'checks a line at the prompt as a command, interpreter ' + 'input under terminal_input, and shell input under both',
    async () => {
      const gate = await createPermissionGate(await shellSplitter());
      const outcome = async (fg: Parameters<typeof classifyTerminalInput>[0], data: string) => {
        const g = await gate.build('terminal_input', data, { roots: ['/ws'], foreground: fg });
        return g.kind === 'granted' ? 'granted' : decide(g.request, policy).outcome;
      };
      expect(await outcome({ kind: 'prompt' }, 'ls\r')).toBe('allow');
      expect(await outcome({ kind: 'prompt' }, 'rm x\r')).toBe('deny');
      expect(await outcome({ kind: 'program', name: 'python3' }, 'print(1)\n')).toBe('allow');
      expect(await outcome({ kind: 'program', name: 'python3' }, "__import__('os').system('rm -rf /')\n")).toBe(
        'confirm',
      );
      expect(await outcome({ kind: 'program', name: 'bash' }, 'rm x\n')).toBe('deny');
      expect(await outcome({ kind: 'program', name: 'bash' }, 'ls\n')).toBe('confirm');
      expect(await outcome({ kind: 'program', name: 'sh' }, 'rm -rf /\n')).toBe('deny');
      expect(await outcome({ kind: 'program', name: 'htop' }, 'q')).toBe('granted');
      // An unfinished line is part of what is asked about (shown whole), not left out behind a completed one.
      const shown = await gate.build('terminal_input', 'print(1)\n__import__("os").sys', {
        roots: ['/ws'],
        foreground: { kind: 'program', name: 'python3' },
      });
      expect(shown.kind === 'decide' && shown.request.input).toBe('print(1)\n__import__("os").sys');
      expect(await outcome({ kind: 'program', name: 'python3' }, 'print(1)\n__import__("os").sys')).toBe('confirm');
    },
  );

  it('interpreter input does not inherit a global allow', async () => {
    const gate = await createPermissionGate(await shellSplitter());
    const g = await gate.build('terminal_input', 'print(1)\n', {
      roots: ['/ws'],
      foreground: { kind: 'program', name: 'python3' },
    });
    expect(g.kind === 'decide' && decide(g.request, merged({ default: 'allow' }))).toMatchObject({
      outcome: 'confirm',
      level: 'tool_default',
    });
    expect(
      g.kind === 'decide' &&
        decide(g.request, merged({ default: 'allow', tools: { terminal_input: { default: 'allow' } } })).outcome,
    ).toBe('allow');
  });

  it('builds file requests with the policy files as sensitive paths', async () => {
    const gate = await createPermissionGate(await shellSplitter());
    const g = await gate.build('edit_file', '.skein/policy.json', { roots: ['/nonexistent-ws'] });
    expect(g.kind === 'decide' && g.request.path?.sensitive?.[0]).toBe('/nonexistent-ws/.skein/policy.json');
    expect(g.kind === 'decide' && decide(g.request, policy)).toMatchObject({ outcome: 'confirm', scope: 'sensitive' });
  });
});
