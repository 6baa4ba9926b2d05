/**
 * namesPolicy: which shell words could name skein's policy (`.skein`, `skein/policy.json`), literally or as
 * a glob bash would expand to it. A `[` without its `]` is a literal bracket in bash, so colour escapes such
 * as `printf '\033[1;31m'` name nothing (they used to ask, as "cannot tell").
 */
import { describe, expect, it } from 'vitest';
import { namesPolicy } from '../../../machines/permission/permission-paths.ts';

describe('namesPolicy', () => {
  it.each([
    ['cat .skein/policy.json', '.skein/policy.json'],
    ['echo x > .SKEIN/policy.json', '.SKEIN/policy.json'],
    ['cp p.json .sk*/policy.json', '.sk*/policy.json'],
    ['rm .s?ein/x', '.s?ein/x'],
    ['mv a .[s]kein/b', '.[s]kein/b'],
    ['mv a [.]skein/b', '[.]skein/b'],
    ['mv a .[!x]kein/b', '.[!x]kein/b'],
    ['vi ~/.config/skein/policy.json', '~/.config/skein/policy.json'],
    ['vi ~/.config/skein/polic?.json', '~/.config/skein/polic?.json'],
    ['ls .[z-a]kein', '.[z-a]kein'],
  ])('%s names the policy through %s', (command, word) => {
    expect(namesPolicy(command)).toBe(word);
  });

  it.each([
    ["printf '\\033[1;31mred\\033[0m line one\\n'; echo line two"],
    ['echo [abc'],
    ['ls src/[a-z]*.ts'],
    ['echo skein policy.json'],
    ['cat skein.json .skeins/x'],
    ['ls .[!s]kein'],
    ['git status'],
  ])('%s names nothing', (command) => {
    expect(namesPolicy(command)).toBeUndefined();
  });
});
