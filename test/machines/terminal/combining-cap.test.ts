/**
 * A screen's cell takes at most MAX_JOINED zero-width code points (combining-cap.ts): the provider's rule on any
 * sequence of widths, and real xterm screens fed marks in every arrangement, whose every cell stays bounded while
 * ordinary accented text and emoji keep their cells.
 */
import fc from 'fast-check';
import { capCombining, cappedProvider, MAX_JOINED } from '../../../machines/terminal/combining-cap.ts';
import { TerminalScreen } from '../../../actors/terminal/terminal-screen.ts';
import { propertySeed } from '../../support/seed.ts';

const seed = propertySeed();

/** xterm's default rule (UnicodeV6): a zero-width code point joins a preceding one that has a width. */
const v6Like = {
  version: 'test',
  wcwidth: (cp: number) => (cp >= 0x300 && cp < 0x370 ? 0 : cp >= 0x1100 && cp < 0x1160 ? 2 : 1) as 0 | 1 | 2,
  charProperties(cp: number, preceding: number) {
    let width = this.wcwidth(cp) as number;
    let join = width === 0 && preceding !== 0;
    if (join) {
      const old = (preceding >>> 1) & 3;
      if (old === 0) join = false;
      else if (old > width) width = old;
    }
    return (width << 1) | +join;
  },
};

/** The cells of every line of `screen`'s active buffer, as strings. */
function cells(screen: TerminalScreen): string[] {
  const buf = screen.term.buffer.active;
  const out: string[] = [];
  for (let y = 0; y < buf.length; y++) {
    const line = buf.getLine(y)!;
    for (let x = 0; x < line.length; x++) out.push(line.getCell(x)!.getChars());
  }
  return out;
}

describe('cappedProvider', () => {
  it(`never joins more than MAX_JOINED in a row, and changes nothing below the cap (seed ${seed})`, () => {
    const capped = cappedProvider(v6Like);
    const cp = fc.constantFrom(0x61, 0x301, 0x302, 0x1100, 0x20);
    fc.assert(
      fc.property(fc.array(cp, { maxLength: 200 }), (cps) => {
        let preceding = 0;
        let ref = 0;
        let run = 0;
        let overflow = false;
        for (const c of cps) {
          const props = capped.charProperties(c, preceding);
          const expected = v6Like.charProperties(c, ref);
          const joined = (props & 1) === 1;
          if (!(expected & 1)) {
            // Not a join by xterm's rule: exactly what xterm says.
            expect(props & 7).toBe(expected & 7);
            run = 0;
            overflow = false;
          } else if (overflow || run === MAX_JOINED) {
            // Past the cap: a cell of its own, and so on until a code point that does not join.
            expect({ joined, width: (props >>> 1) & 3 }).toEqual({ joined: false, width: 1 });
            overflow = true;
          } else {
            expect(props & 7).toBe(expected & 7);
            run++;
          }
          expect(joined ? run : 0).toBeLessThanOrEqual(MAX_JOINED);
          preceding = props;
          ref = overflow ? 1 << 1 : expected;
        }
      }),
      { seed },
    );
  });
});

describe('a screen fed zero-width code points', () => {
  it('keeps accents and emoji with their letters, in one cell each', async () => {
    const screen = new TerminalScreen(40, 5);
    try {
      expect(screen.combiningCapped).toBe(true);
      await screen.write('e\u0301 a\u0308\u0304 \u0915\u094d\u0937 👍\ufe0f ok');
      expect(screen.snapshot().lines[0]).toBe('e\u0301 a\u0308\u0304 \u0915\u094d\u0937 👍\ufe0f ok');
      expect(cells(screen).slice(0, 3)).toEqual(['e\u0301', ' ', 'a\u0308\u0304']);
    } finally {
      screen.dispose();
    }
  });

  it(`holds at most 1 + MAX_JOINED code points in any cell, however the marks come (seed ${seed})`, async () => {
    const mark = fc.constantFrom('\u0301', '\u0302', '\ufe0f', '\u200d', '\u0951');
    const piece = fc.oneof(
      fc.array(mark, { minLength: 1, maxLength: 40 }).map((m) => m.join('')),
      fc.constantFrom('a', 'e', '\u4e2d', ' ', '\x1b[1m', '\x1b[0m', '\r', '\r\n', '\x1b[H'),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { minLength: 1, maxLength: 60 }), async (pieces) => {
        const screen = new TerminalScreen(20, 4);
        try {
          // Each piece its own write: a run of marks split across chunks must not escape the count.
          for (const p of pieces) await screen.write(p);
          for (const cell of cells(screen)) expect([...cell].length).toBeLessThanOrEqual(1 + MAX_JOINED);
        } finally {
          screen.dispose();
        }
      }),
      { seed, numRuns: 60 },
    );
  });

  it('gives a million marks after one letter cells of their own, the screen still parsing after them', async () => {
    const screen = new TerminalScreen(80, 24);
    try {
      await screen.write('a');
      const chunk = '\u0301'.repeat(65_536);
      for (let i = 0; i < 16; i++) await screen.write(chunk);
      await screen.write('\r\nafter');
      const all = cells(screen);
      expect(Math.max(...all.map((c) => [...c].length))).toBeLessThanOrEqual(1 + MAX_JOINED);
      expect(screen.snapshot().lines.join('\n')).toContain('after');
    } finally {
      screen.dispose();
    }
  });
});

describe("the web console's xterm (@xterm/xterm)", () => {
  it('takes the cap too', async () => {
    const { Terminal } = await import('@xterm/xterm');
    const term = new Terminal({ cols: 20, rows: 4, allowProposedApi: true, logLevel: 'off' });
    try {
      expect(capCombining(term)).toBe(true);
      await new Promise<void>((resolve) => term.write(`a${'\u0301'.repeat(1000)}`, resolve));
      const line = term.buffer.active.getLine(0)!;
      const longest = Math.max(
        ...Array.from({ length: line.length }, (_, x) => [...line.getCell(x)!.getChars()].length),
      );
      expect(longest).toBe(1 + MAX_JOINED);
    } finally {
      term.dispose();
    }
  });
});
