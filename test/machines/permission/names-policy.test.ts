/**
 * namesPolicy: which shell words could name skein's policy (`.skein`, `skein/policy.json`), literally or as
 * a glob bash would expand to it. A `[` without its `]` is a literal bracket in bash, so colour escapes such
 * as `printf '\033[1;31m'` name nothing (they used to ask, as "cannot tell").
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchesPart, namesPolicy } from '../../../machines/permission/permission-paths.ts';
import { propertySeed } from '../../support/seed.ts';

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

  it('decides words of many globs at once (each took minutes while the glob was a backtracking regex)', () => {
    // Before: 40 `*` before an `x` took about 1 s, 100 took two minutes, in any word of any command.
    expect(namesPolicy(`echo ${'*'.repeat(100)}x`)).toBeUndefined();
    expect(namesPolicy(`ls ${'*a'.repeat(30_000)}x`)).toBeUndefined();
    expect(namesPolicy(`cat .${'*'.repeat(10_000)}n/x`)).toBe(`.${'*'.repeat(10_000)}n/x`);
    expect(namesPolicy(`vi ~/.config/sk${'*'.repeat(500)}/pol${'?'.repeat(3)}*`)).toBe(
      `~/.config/sk${'*'.repeat(500)}/pol${'?'.repeat(3)}*`,
    );
  });
});

describe('matchesPart (a glob against a policy name)', () => {
  const seed = propertySeed();
  /** The regex the glob used to be compiled to (exponential on `*a*a…`, so only short words here). */
  const oracle = (part: string, name: string) => {
    if (part.toLowerCase() === name) return true;
    if (!/[*?[]/.test(part)) return false;
    let src = '';
    for (let i = 0; i < part.length; i++) {
      const c = part[i]!;
      if (c === '*') src += '.*';
      else if (c === '?') src += '.';
      else if (c === '[') {
        const start = part[i + 1] === '!' || part[i + 1] === '^' ? i + 2 : i + 1;
        const end = part.indexOf(']', start + 1);
        if (end === -1 || start >= part.length) {
          src += '\\[';
          continue;
        }
        const body = part.slice(start, end).replace(/[\\\]^]/g, '\\$&');
        src += `[${start === i + 2 ? '^' : ''}${body}]`;
        i = end;
      } else src += c.replace(/[.+^${}()|\\\]]/g, '\\$&');
    }
    try {
      return new RegExp(`^${src}$`, 'i').test(name);
    } catch {
      return true;
    }
  };

  // Each expected answer is what bash 5.2 gives for `shopt -s nocasematch; [[ name == glob ]]`.
  it.each<[string, string, boolean]>([
    // A `[` with no closing `]` is a literal `[`.
    ['x[*', 'x[1', true],
    ['x[*', 'xa1', false],
    ['?[', 'a[', true],
    ['?[', 'ab', false],
    // A `]` first in a class (after `!` too) is part of it.
    ['[]]x', ']x', true],
    ['[]]x', 'ax', false],
    ['[!]]x', 'ax', true],
    ['[!]]x', ']x', false],
    // `!` and `^` negate; a `^` later in a class is a character of it.
    ['[!a]x', 'bx', true],
    ['[!a]x', 'ax', false],
    ['[^a]x', 'bx', true],
    ['[a^]x', '^x', true],
    // A class holds only what is between its brackets, compared without case.
    ['[ab]c', 'cc', false],
    ['[ab]c', 'ac', true],
    ['[A]x', 'ax', true],
    ['*.JSON', 'policy.json', true],
    // A `*` may match nothing, at the end too; without one the glob matches from the name's first character.
    ['policy.json*', 'policy.json', true],
    ['sk*', 'askein', false],
    ['sk?', 'xsk1', false],
    ['.*skein', '.skein', true],
    ['sk*n', 'skein', true],
  ])('%s against %s: %s', (glob, name, expected) => {
    expect(matchesPart(glob, name)).toBe(expected);
  });

  // Errs towards asking: a letter whose upper or lower form is the name's (a case-insensitive file system may
  // fold them alike; bash under nocasematch need not) could name it.
  it('takes a letter whose upper form (ſ → S) or lower form (Kelvin sign → k) is the name letter’s', () => {
    expect(matchesPart('.\u017fk*', '.skein')).toBe(true);
    expect(matchesPart('.s\u212a*', '.skein')).toBe(true);
    expect(matchesPart('.\u017fx*', '.skein')).toBe(false);
    // Without a wildcard too: the word is the name in a folding file system all the same.
    expect(matchesPart('.\u017fkein', '.skein')).toBe(true);
    expect(matchesPart('.\u017fkeins', '.skein')).toBe(false);
  });

  it(`agrees with the regex it replaces on short words (seed ${seed})`, () => {
    const chars = ['*', '?', '[', ']', '!', '^', '-', '.', '\\', 's', 'k', 'e', 'i', 'n', 'S', 'K', 'p', 'o', 'l', 'z'];
    const word = fc.array(fc.constantFrom(...chars), { maxLength: 9 }).map((a) => a.join(''));
    fc.assert(
      fc.property(word, fc.constantFrom('.skein', 'skein', 'policy.json'), (w, name) => {
        expect(matchesPart(w, name)).toBe(oracle(w, name));
      }),
      { seed, numRuns: 5_000 },
    );
  });
});
