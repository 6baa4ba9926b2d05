import fc from 'fast-check';
import {
  cutPlain,
  headTail,
  isPlainText,
  lastLine,
  plainText,
  skippablePrefix,
  utf8Length,
} from '../../../machines/terminal/terminal-text.ts';
import { propertySeed } from '../../support/seed.ts';

const seed = propertySeed();

describe('isPlainText', () => {
  it(`is true exactly when every character is printable ASCII, CR or LF (seed ${seed})`, () => {
    const char = fc.oneof(
      fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      fc.constantFrom('\r', '\n', '\x00', '\t', '\x1b', '\x7f', '\x80', '\u2028', 'é', '😀'),
    );
    fc.assert(
      fc.property(fc.array(char, { maxLength: 200 }), (chars) => {
        const text = chars.join('');
        const expected = [...text].every((c) => c === '\r' || c === '\n' || (c >= ' ' && c <= '~'));
        expect(isPlainText(text)).toBe(expected);
      }),
      { seed },
    );
  });

  it.each([
    ['empty', '', true],
    ['a line', 'make: done\r\n', true],
    ['a control last', 'abc\x07', false],
    ['a control after a line break', 'abc\n\x1b[0m', false],
  ])('%s', (_name, text, expected) => {
    expect(isPlainText(text)).toBe(expected);
  });
});

describe('plainText', () => {
  it.each([
    ['SGR colours', '\x1b[1;31mred\x1b[0m plain', 'red plain'],
    ['CRLF', 'a\r\nb\r\n', 'a\nb\n'],
    ['progress bar rewritten with CR', '10%\r50%\r100%\n', '100%\n'],
    ['shorter rewrite keeps the tail of the longer text', 'abcdef\rXY\n', 'XYcdef\n'],
    ['OSC title and shell marks', '\x1b]0;title\x07\x1b]133;D;0\x07x', 'x'],
    ['erase line and cursor moves', '\x1b[2K\x1b[1Ghello\x1b[3A', 'hello'],
    ['backspaces', 'ab\bc', 'ac'],
  ])('%s', (_name, raw, expected) => {
    expect(plainText(raw)).toBe(expected);
  });

  it(`never leaves an ESC or a C0 control other than \\n and \\t (seed ${seed})`, () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string(),
            fc.constantFrom('\x1b[31m', '\x1b]0;t\x07', '\r', '\r\n', '\x1b', '\x07', '\b', '\x1b[?1049h'),
          ),
        ),
        (parts) => {
          const out = plainText(parts.join(''));
          // eslint-disable-next-line no-control-regex
          expect(out).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
        },
      ),
      { seed },
    );
  });

  it(`gives plain printable text (CR, LF) the result of the full path, forced by a leading SGR (seed ${seed})`, () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string(), fc.constantFrom('\r', '\n', '\r\n', '\r\r\n', 'abc', ' '))),
        (parts) => {
          // Printable ASCII, CR and LF only: what the fast path takes.
          const text = parts.join('').replace(/[^\x20-\x7e\r\n]/g, '');
          expect(plainText(text)).toBe(plainText(`\x1b[m${text}`));
        },
      ),
      { seed },
    );
  });
});

describe('plainText on lines rewritten with CR and BS', () => {
  /** The rules, a character at a time: a BS removes the code point before it, a CR overwrites from column 0. */
  const reference = (raw: string) =>
    raw
      .replace(/\r+\n/g, '\n')
      .split('\n')
      .map((line) => {
        const kept: string[] = [];
        for (const ch of line) {
          if (ch === '\b') kept.pop();
          else kept.push(ch);
        }
        let screen = '';
        for (const part of kept.join('').split('\r')) screen = part + screen.slice(part.length);
        return screen;
      })
      .join('\n');

  it(`equals the character-at-a-time rules (seed ${seed})`, () => {
    const piece = fc.oneof(
      fc.constantFrom('\b', '\b\b', '\r', '\n', '\r\n', '\r\r\n', 'a', 'bc', 'longer text', '😀', 'é', ' '),
      fc.string({ maxLength: 8 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), (parts) => {
        const raw = parts.join('');
        expect(plainText(raw)).toBe(reference(raw));
      }),
      { seed },
    );
  });

  it.each([
    ['a backspace removes a whole emoji', 'a😀\bb', 'ab'],
    ['more backspaces than characters', 'ab\b\b\b\bc', 'c'],
    ['a backspace does not cross a CR', 'abc\rX\bY', 'Ybc'],
  ])('%s', (_name, raw, expected) => {
    expect(plainText(raw)).toBe(expected);
  });
});

describe('headTail', () => {
  it('returns short text unchanged', () => {
    expect(headTail('hello\n', 100)).toEqual({ text: 'hello\n', truncated: false, omittedBytes: 0 });
  });

  it('keeps the head and the tail, names the omitted bytes and the paging hint', () => {
    const lines = Array.from({ length: 1000 }, (_, i) => `line ${i}`).join('\n');
    const t = headTail(lines, 1000, 'page it with terminal.read {"cursor": 0}');
    expect(t.truncated).toBe(true);
    expect(t.text.startsWith('line 0\nline 1\n')).toBe(true);
    expect(t.text.endsWith('line 999')).toBe(true);
    expect(t.text).toMatch(/\[… \d+ bytes omitted; page it with terminal\.read \{"cursor": 0\} …\]/);
    expect(utf8Length(t.text)).toBeLessThan(1200);
    expect(t.omittedBytes).toBe(
      utf8Length(lines) - utf8Length(t.text) + utf8Length(t.text.match(/\n\[…[^\]]*\]\n/)![0]),
    );
  });

  it(`stays within budget plus the marker and never splits a character (seed ${seed})`, () => {
    fc.assert(
      fc.property(
        // U+FFFD is what a split character decodes to: keep it out of the input so its presence means a split.
        fc.string({ unit: 'grapheme', maxLength: 3000 }).map((s) => s.replaceAll('\uFFFD', '?')),
        fc.integer({ min: 256, max: 2000 }),
        (text, max) => {
          const t = headTail(text, max);
          // A split character shows up as U+FFFD: count them, since the generated text may hold some itself.
          const replacements = (x: string) => x.split('\uFFFD').length - 1;
          expect(replacements(t.text)).toBeLessThanOrEqual(replacements(text));
          if (!t.truncated) expect(t.text).toBe(text);
          else expect(utf8Length(t.text)).toBeLessThanOrEqual(max + 80);
        },
      ),
      { seed },
    );
  });
});

describe('utf8Length', () => {
  // The output path counts bytes with Buffer.byteLength (native); offsets must agree with utf8Length everywhere.
  it(`equals Buffer.byteLength for any string, lone surrogates included (seed ${seed})`, () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => {
        expect(utf8Length(s)).toBe(Buffer.byteLength(s, 'utf8'));
      }),
      { seed, numRuns: 500 },
    );
    expect(utf8Length('\ud800x')).toBe(4);
  });
});

describe('cutPlain', () => {
  // The screen's unparsed text plus a flood's next chunk, cut without joining the two (issue 15).
  const plainPiece = fc
    .array(fc.constantFrom('a', 'b', ' ', '\r', '\n', '\r\n', 'x'.repeat(40), 'y\r\n'.repeat(6)), { maxLength: 120 })
    .map((parts) => parts.join(''));

  it(`cuts head + tail where skippablePrefix cuts their join, and keeps the rest (seed ${seed})`, () => {
    fc.assert(
      fc.property(
        plainPiece,
        plainPiece,
        fc.integer({ min: 2, max: 12 }),
        fc.integer({ min: 1, max: 6 }),
        (head, tail, cols, rows) => {
          const all = head + tail;
          const skip = skippablePrefix(all, cols, rows, true);
          expect(cutPlain(head, tail, cols, rows)).toEqual({ skip, kept: all.slice(skip) });
        },
      ),
      { seed, numRuns: 2000 },
    );
  });

  it('cuts a long line without CR or LF inside the tail, at a multiple of cols from the head', () => {
    expect(cutPlain('a'.repeat(7), 'b'.repeat(100), 10, 2)).toEqual({ skip: 40, kept: 'b'.repeat(67) });
  });
});

describe('lastLine', () => {
  it('is the last line with text, without colours or the line end', () => {
    expect(lastLine('starting\r\n\x1b[31mbwrap: No permissions to create a new namespace\x1b[0m\r\n\r\n')).toBe(
      'bwrap: No permissions to create a new namespace',
    );
    expect(lastLine('one\rtwo')).toBe('two');
  });

  it('is empty when nothing was printed, and keeps the end of a long line', () => {
    expect(lastLine('')).toBe('');
    expect(lastLine('\r\n  \r\n')).toBe('');
    const long = `${'x'.repeat(500)} the end`;
    expect(lastLine(long, 20)).toBe(`…${long.slice(-19)}`);
    expect(lastLine(long, 20)).toHaveLength(20);
  });
});
