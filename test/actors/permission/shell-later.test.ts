/**
 * What bash runs later from a string (trap actions, prompt variables) and the builtins that run what the gate
 * cannot see: each form, and the forms that leave nothing to run.
 */
import { assignedScript, hiddenRun, laterScripts } from '../../../actors/permission/shell-later.ts';

describe('shell-later', () => {
  it("finds a trap's action, after -- too, and nothing in the forms that only list or reset", () => {
    expect(laterScripts(['trap', 'rm -f x', 'RETURN'])).toEqual(['rm -f x']);
    expect(laterScripts(['trap', '--', 'rm x', 'INT', 'TERM'])).toEqual(['rm x']);
    for (const argv of [
      ['trap', '-p'],
      ['trap', '-l'],
      ['trap', 'INT'],
      ['trap', '-', 'INT'],
      ['trap', '', 'INT'],
    ])
      expect(laterScripts(argv), argv.join(' ')).toEqual([]);
  });

  it('finds the values of PROMPT_COMMAND and PS0-PS4 (not PS3), assigned or declared', () => {
    // A prompt is expanded as a here-doc's body is (quotes are text outside a substitution).
    expect(assignedScript('PS4=$(rm x)')).toBe(': <<SKEIN_EXPANDED\n$(rm x)\nSKEIN_EXPANDED');
    expect(assignedScript('PROMPT_COMMAND[1]=rm x')).toBe('rm x');
    expect(assignedScript('PROMPT_COMMAND+=;rm x')).toBe(';rm x');
    expect(assignedScript('PS3=pick: ')).toBeUndefined();
    expect(assignedScript('PATH=/bin')).toBeUndefined();
    expect(laterScripts(['export', 'A=1', 'PROMPT_COMMAND=rm x'])).toEqual(['rm x']);
    expect(laterScripts(['declare', '-x', 'PS1=$(id)'])).toEqual([': <<SKEIN_EXPANDED\n$(id)\nSKEIN_EXPANDED']);
  });

  it('names the builtins that run a command it cannot see', () => {
    expect(hiddenRun(['fc', '-s'])).toBe('fc runs commands from the history');
    expect(hiddenRun(['hash', '-p', '/bin/rm', 'ls'])).toBe('hash -p makes a name run another program');
    expect(hiddenRun(['bind', '-x', '"\\C-t": rm x'])).toBe('bind -x runs a command on a key');
    expect(hiddenRun(['complete', '-C', 'rm x', 'git'])).toBe('complete -C runs a command to complete');
    for (const argv of [['hash'], ['hash', '-r'], ['bind', '-p'], ['complete', '-W', 'a b', 'x'], ['history']])
      expect(hiddenRun(argv), argv.join(' ')).toBeUndefined();
  });
});
