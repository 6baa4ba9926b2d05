/**
 * Assignment words, where tree-sitter-bash and bash disagree (found by comparing splits with what bash 5.2.15 ran,
 * every program replaced by `command_not_found_handle`, while looking for more shapes like `- 00=`). bash reads a
 * word before the command's name as an assignment by its text (`isAssignmentWord`): `_=1 rm -rf /` runs rm, where
 * the gate judged the command `_=1`; `0a=1 ls` runs `0a=1`, where the gate judged ls. And two refusals: an
 * assignment touching the next word (`a='x'\ls rm` is `a=xls` and rm), and a `#` inside a word, which
 * tree-sitter-bash read as a comment hiding the commands after it. The bash result is the comment beside each.
 */
import type { ShellSplit, ShellSubCommand } from '../../../machines/permission/shell-words.ts';
import { decideTerminal, merged, shellSplitter } from '../../support/permission-fixtures.ts';

const split = async (src: string) => (await shellSplitter())(src);
const run = (text: string, argv: string[], forms = [text]): ShellSubCommand => ({ kind: 'command', text, forms, argv });
const denyRm = merged({ default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } });

describe('splitShell: the words bash reads as assignments', () => {
  it.each<[string, ShellSplit]>([
    // bash: rm <-rf> <x>, with _ set
    ['_=1 rm -rf x', { commands: [run('_=1 rm -rf x', ['rm', '-rf', 'x'], ['_=1 rm -rf x', 'rm -rf x'])], unsafe: [] }],
    ['_+=1 ls', { commands: [run('_+=1 ls', ['ls'], ['_+=1 ls', 'ls'])], unsafe: [] }],
    ['_="a b" ls', { commands: [run('_=a b ls', ['ls'], ['_=a b ls', 'ls'])], unsafe: [] }],
    ['a=1 _=2 rm x', { commands: [run('a=1 _=2 rm x', ['rm', 'x'], ['a=1 _=2 rm x', 'rm x'])], unsafe: [] }],
    ['_=', { commands: [run('_=', [])], unsafe: [] }],
    // bash: _=1 <ls> (a quoted name is no assignment)
    ["'_'=1 ls", { commands: [run('_=1 ls', ['_=1', 'ls'])], unsafe: [] }],
    // bash: 0a=1 <ls>; also -__=, and ä=1 (a name is ASCII letters, digits and _)
    ['0a=1 ls', { commands: [run('0a=1 ls', ['0a=1', 'ls'])], unsafe: [] }],
    ['-__= ls', { commands: [run('-__= ls', ['-__=', 'ls'])], unsafe: [] }],
    ['ä=1 ls', { commands: [run('ä=1 ls', ['ä=1', 'ls'])], unsafe: [] }],
    // bash: 0a=1 <b=2> <ls>: after the command's name no word is an assignment
    ['0a=1 b=2 ls', { commands: [run('0a=1 b=2 ls', ['0a=1', 'b=2', 'ls'])], unsafe: [] }],
    // bash: 0b=2 <c=3>, with a set
    ['a=1 0b=2 c=3', { commands: [run('a=1 0b=2 c=3', ['0b=2', 'c=3'], ['a=1 0b=2 c=3', '0b=2 c=3'])], unsafe: [] }],
  ])('%j', async (src, expected) => {
    expect(await split(src)).toEqual(expected);
  });

  it('denies rm behind _= by the deny rule and the built-in rules (both allowed it)', async () => {
    expect(await decideTerminal(denyRm, '_=1 rm -rf x')).toMatchObject({ outcome: 'deny', level: 'deny_rule' });
    expect(await decideTerminal(merged({ default: 'allow' }), '_= rm -rf /')).toMatchObject({
      outcome: 'deny',
      level: 'builtin',
    });
  });
});

describe('splitShell: refused where bash joins what tree-sitter-bash split', () => {
  it.each([
    // bash: rm <-rf> </>, with a=xls
    [
      "a='x'\\ls rm -rf /",
      `"a='x'" and "\\ls" in "a='x'\\ls rm -rf /" touch with no blank between them: bash reads one word there, the ` +
        'check read two. Quote the whole word, or put a blank between the words',
    ],
    // bash: a#x, then rm <-rf> </> <=0>
    [
      'a#x; rm -rf / \\\n=0',
      'the comment "#x; rm -rf / \\" touches the word before it: bash starts a comment only after a blank, so it ' +
        'reads none there, the check read one. Put a blank before the #, or quote it',
    ],
    // bash: rm <x>, with a set to "(1)#x"
    [
      'a=(1)#x; rm x',
      'the comment "#x; rm x" touches the word before it: bash starts a comment only after a blank, so it reads ' +
        'none there, the check read one. Put a blank before the #, or quote it',
    ],
  ])('%j', async (src, message) => {
    expect((await split(src)).parseError).toBe(message);
    expect(await decideTerminal(denyRm, src)).toMatchObject({ outcome: 'deny' });
  });

  // bash ran only the first command of each (the subshell's, the case item's, and ls, cat).
  it.each([
    'ls #ok',
    'ls;#ok',
    'a=1 #c',
    'ls \\\n#c',
    'ls &#c',
    '(ls)#c; rm x',
    'case a in a)#c\n ls;; esac',
    'ls|#c\ncat',
  ])('reads the comment in %j as bash does', async (src) => {
    expect((await split(src)).parseError).toBeUndefined();
  });
});
