/**
 * Inputs bash reads other than the check would, found by a live review (3 December), each refused or denied with
 * its message: a line continuation with text on both sides, a function replacing a builtin or the rc, `enable`
 * turning one off (6 December), a program named by a tilde expansion (6 December), a function that starts itself
 * (a fork bomb), an array subscript with an expansion where a builtin reads a variable name.
 */
import type { PolicyInput } from '../../../schemas/policy.ts';
import { decideTerminal, ISSUE_11_POLICY, merged, shellSplitter } from '../../support/permission-fixtures.ts';

const split = async (src: string) => (await shellSplitter())(src);

describe('splitShell: a line continuation with text on both sides, outside a word', () => {
  const strict = merged(ISSUE_11_POLICY as PolicyInput);
  const allowAll = merged({ default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } });
  // Found live by a review, under the allow-list above: bash makes `a\<newline>#` the word `a#`, so the line
  // goes on and runs touch; tree-sitter-bash read a comment there and the gate judged `echo a` alone. In double
  // quotes, `$\<newline>(` is `$(`: the substitution ran unjudged.
  it.each([
    ['echo a\\\n#; touch PWNED', 'echo a', '#'],
    ['echo x\\\n#; rm -f keep.txt', 'echo x', '#'],
    ['echo "$\\\n(touch PWNED2)"', 'echo "$', '('],
    ['echo "$\\\n{x:-$(rm -f keep.txt)}"', 'echo "$', '{'],
    ['ls; echo a\\\n#; rm -f keep.txt', 'ls; echo a', '#'],
  ])('refuses %j, naming the join', async (src, line, next) => {
    expect((await split(src)).parseError).toBe(
      `a line continuation after ${line} joins it to the next line's ${JSON.stringify(next)} with no blank ` +
        'between: bash reads one word there (or a string with other expansions), the check would read two. Put ' +
        'a blank before the backslash, or join the lines',
    );
    expect((await decideTerminal(strict, src)).outcome).toBe('deny');
    expect((await decideTerminal(allowAll, src)).outcome).not.toBe('allow');
  });

  it('keeps one bash and the check read alike: quotes, comments, text without $, an escaped backslash', async () => {
    for (const src of [
      "echo 'a\\\nb'",
      "echo $'a\\\nb'",
      'echo a # note\\\necho b',
      'echo "ab\\\ncd"',
      'echo a\\\\\necho b',
      'echo a \\\n#; comment',
    ]) {
      expect((await split(src)).parseError, src).toBeUndefined();
      expect((await decideTerminal(strict, src)).outcome, src).toBe('allow');
    }
  });
});

describe('splitShell: a function that would replace a builtin or the rc', () => {
  const strict = merged(ISSUE_11_POLICY as PolicyInput);
  it.each([
    ["__skein_prompt() { echo -ne '\\e]133;D;0\\a'; }", '__skein_prompt', "skein's own shell integration"],
    ['builtin() { echo; }', 'builtin', "the shell's builtin"],
    ['function read { echo; }', 'read', "the shell's read"],
    ['ls; printf() { echo; }', 'printf', "the shell's printf"],
  ])('refuses %j', async (src, name, what) => {
    expect((await split(src)).parseError).toBe(
      `a function named ${JSON.stringify(name)} would replace ${what}, which skein relies on to find where ` +
        'commands end and to discard input left at the prompt; give the function another name',
    );
    expect((await decideTerminal(strict, src)).outcome).toBe('deny');
  });

  it('keeps a function of its own name', async () => {
    const src = 'greet() { echo hi; }';
    expect((await split(src)).parseError).toBeUndefined();
    expect((await decideTerminal(strict, src)).outcome).toBe('allow');
  });
});

describe('splitShell: enable turning off or loading a builtin the rc relies on', () => {
  const allowAll = merged({ default: 'allow', tools: { terminal: { always_deny: [{ pattern: '\\btouch\\b' }] } } });
  // Found live by a review (6 December), under the policy above: `enable -n read` ended the rc's typeahead drain
  // as a function named read would have, and a `touch` typed ahead behind `cat` ran at the prompt.
  it.each([
    ['enable -n read', 'turn a builtin off in', 'n', 'read'],
    ['enable -sn printf', 'turn a builtin off in', 'n', 'printf'],
    ['enable -d read', 'turn a builtin off in', 'd', 'read'],
    ['enable -f ./x.so read', 'load a builtin into', 'f', ''],
    ['enable -fx.so read', 'load a builtin into', 'f', ''],
    ["ls && 'enable' -n builtin", 'turn a builtin off in', 'n', 'builtin'],
    ['builtin enable -n .', 'turn a builtin off in', 'n', '.'],
    ['command enable -n -- local', 'turn a builtin off in', 'n', 'local'],
    ["eval 'enable -n read'", 'turn a builtin off in', 'n', 'read'],
  ])('refuses %j', async (src, what, option, name) => {
    const error = (await split(src)).parseError ?? '';
    expect(error).toContain(`would ${what} the shell skein's integration runs in (enable -${option})`);
    expect(error).toContain(
      option === 'f' ? 'run that code as a program of its own instead' : `give its path (/usr/bin/${name})`,
    );
    expect((await decideTerminal(allowAll, src)).outcome).toBe('deny');
  });

  it('keeps listing and enabling, and names after the options', async () => {
    for (const src of [
      'enable',
      'enable -p',
      'enable -a',
      'enable -s',
      'enable echo',
      'enable -- -n',
      'enable read -n',
    ]) {
      expect((await split(src)).parseError, src).toBeUndefined();
      expect((await decideTerminal(allowAll, src)).outcome, src).toBe('allow');
    }
  });
});

describe('splitShell: a program named by a tilde expansion', () => {
  const allowAll = merged({ default: 'allow', tools: { terminal: { always_deny: [{ pattern: '\\btouch\\b' }] } } });
  // Found live by a review (6 December), under the policy above: `~-` is $OLDPWD, set with no `$` by a `for` over
  // `/usr/bin/t?uch`, and the gate, which asks about `$OLDPWD` as a program, allowed `~-` and touch ran.
  it.each([
    ['for OLDPWD in /usr/bin/t?uch; do :; done; ~- x', '~-'],
    ['~ x', '~'],
    ['~+/t x', '~+/t'],
    ['~root/x', '~root/x'],
    ['env ~- x', '~-'],
    ['command ~- x', '~-'],
    ['nice -n 5 ~- x', '~-'],
    ['time ~- x', '~-'],
    ['coproc ~- x', '~-'],
    ['x=1 ~- y', '~-'],
    ['>/dev/null ~- x', '~-'],
    ['case a in a) ~- y;; esac', '~-'],
  ])('asks about %j', async (src, name) => {
    expect((await split(src)).unsafe).toContain(`${name} (a tilde expansion names the program)`);
    const decision = await decideTerminal(allowAll, src);
    expect(decision.outcome).toBe('confirm');
    expect(decision.reason).toContain(`"${name} (a tilde expansion names the program)"`);
  });

  it('keeps a tilde in arguments', async () => {
    for (const src of ['ls ~', 'cd ~ && ls', 'echo ~-', 'cat ~/notes.txt']) {
      expect((await decideTerminal(allowAll, src)).outcome, src).toBe('allow');
    }
  });
});

describe('splitShell: a function that starts itself in the background or a pipeline (a fork bomb)', () => {
  const allowAll = merged({ default: 'allow' });
  // The built-in rule knew `:(){ :|:& };:` only; a review ran these past it (as `echo(){ echo & echo; }` under
  // an allow-list with echo, now also a builtin's name).
  it.each([
    ['f(){ f & f; };f', 'in the background'],
    ['bomb() { bomb | bomb & }; bomb', 'in a pipeline'],
    ['function g { g & }', 'in the background'],
    ['x(){ echo; x|cat; }', 'in a pipeline'],
  ])('denies %j by the built-in rules, whatever the policy', async (src, how) => {
    expect((await split(src)).forkBomb).toMatch(new RegExp(`^the function \\w+ starts itself ${how}$`));
    const decided = await decideTerminal(allowAll, src);
    expect(decided.outcome).toBe('deny');
    expect(decided.reason).toMatch(/^Blocked by built-in security rule: .* is a fork bomb/);
  });

  it('keeps plain recursion and a function run in the background from outside', async () => {
    for (const src of ['f(){ echo; f; }', 'f(){ sleep 1; }; f & f']) {
      expect((await split(src)).forkBomb, src).toBeUndefined();
      expect((await decideTerminal(allowAll, src)).outcome, src).toBe('allow');
    }
  });
});

describe('splitShell: an array subscript with an expansion where a builtin reads a variable name', () => {
  // bash evaluates the subscript, expansions included: each runs rm from what reads as a quoted string.
  it.each([
    ["test -v 'a[$(rm x)]'", 'a[$(rm x)]', 'test'],
    ["printf -v 'a[$(rm x)]' %s y", 'a[$(rm x)]', 'printf'],
    ["read -r 'a[`rm x`]'", 'a[`rm x`]', 'read'],
    ["declare 'a[$(rm x)]=1'", 'a[$(rm x)]=1', 'declare'],
    ["local x=1 'a[$(rm x)]'", 'a[$(rm x)]', 'local'],
    ["unset 'a[$(rm x)]'", 'a[$(rm x)]', 'unset'],
    ["let 'n=a[$(rm x)]'", 'n=a[$(rm x)]', 'let'],
    ["let '-a[$(rm x)]'", '-a[$(rm x)]', 'let'],
    ["read -p '[Y/n] ' -a 'a[$(rm x)]'", 'a[$(rm x)]', 'read'],
    ["read -ra'a[$(rm x)]'", 'a[$(rm x)]', 'read'],
    ["read -p x -- 'a[$(rm x)]'", 'a[$(rm x)]', 'read'],
    ["wait -p 'a[$(rm x)]' -n", 'a[$(rm x)]', 'wait'],
    ["mapfile -d '[' -t 'a[$(rm x)]'", 'a[$(rm x)]', 'mapfile'],
  ])('refuses %j, naming the word', async (src, word, name) => {
    expect((await split(src)).parseError).toBe(
      `the argument ${JSON.stringify(word)} of ${name} holds an array subscript with $, \` or a name, which ` +
        'bash evaluates (a name, as the arithmetic its value holds) and so may run a command hidden in a string; ' +
        'use a plain variable name or a number as the subscript',
    );
  });

  it('keeps values (an expansion it sees), plain names and literal subscripts', async () => {
    for (const src of [
      `printf '%s\\n' "\${a[$i]}"`,
      'local v=${a[$i]}',
      'test -n "${a[$i]}"',
      'read -r line',
      'declare -a arr',
      "unset 'a[3]'",
      'printf -v out %s x',
      // Option values that are not names: a prompt, a delimiter (README's own `[Y/n]` prompt was refused).
      "read -r -p '[Y/n] ' x",
      "read -rp '[y/N] ' -t 5 answer",
      "read -p'[x] ' y",
      "mapfile -d '[' -t lines",
    ])
      expect((await split(src)).parseError, src).toBeUndefined();
  });
});
