import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasHidden, reveal } from '../../../machines/common/reveal.ts';

describe('reveal: characters that change how text is drawn are shown as codes', () => {
  it('the bidi isolate trick of the console review reads as what it is', () => {
    const command = "python3 -c \"print('lint ok\u2067');import os;os.system('touch PWNED') #\u2069\"";
    expect(reveal(command)).toBe(
      "python3 -c \"print('lint ok⟦U+2067⟧');import os;os.system('touch PWNED') #⟦U+2069⟧\"",
    );
    expect(hasHidden(command)).toBe(true);
  });

  it('overrides, marks, zero-width characters, the BOM, separators and tag characters', () => {
    expect(reveal('notes\u202Etxt.sh')).toBe('notes⟦U+202E⟧txt.sh');
    expect(reveal('a\u200Bb\u200Ec\u061Cd\uFEFFe\u2028f')).toBe('a⟦U+200B⟧b⟦U+200E⟧c⟦U+061C⟧d⟦U+FEFF⟧e⟦U+2028⟧f');
    expect(reveal('x\u{E0041}')).toBe('x⟦U+E0041⟧');
  });

  it('for a terminal, control characters too (an escape sequence would be run, not shown)', () => {
    expect(reveal('a\x1b]0;owned\x07b\r\x9b2J\n\tc', { controls: true })).toBe(
      'a⟦U+001B⟧]0;owned⟦U+0007⟧b⟦U+000D⟧⟦U+009B⟧2J\n\tc',
    );
    expect(reveal('a\x1bb')).toBe('a\x1bb');
  });

  it('leaves printable text, newlines, tabs and right-to-left letters alone', () => {
    const plain = 'ls -la\n\tשלום مرحبا ✓ ⟦not a code⟧';
    expect(reveal(plain)).toBe(plain);
    expect(hasHidden(plain)).toBe(false);
  });

  it('property: the result holds no hidden character, and text without any is unchanged', () => {
    const seed = Number(process.env['FC_SEED'] ?? Date.now() % 2 ** 31);
    console.log(`reveal property seed ${seed}`);
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const shown = reveal(s);
        expect(hasHidden(shown)).toBe(false);
        if (!hasHidden(s)) expect(shown).toBe(s);
      }),
      { seed, numRuns: 500 },
    );
  });
});
