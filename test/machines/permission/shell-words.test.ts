/**
 * The pure word rules the gate reads commands with: command-name canonicalization, `$'…'` decoding and
 * brace expansion. Each expected value is what GNU bash 5.2 produced for the same input
 * (`printf '[%s]' <word>`), so a wrong rule means the gate judges other words than bash runs.
 */
import {
  canonicalName,
  decodeAnsiC,
  expandBraces,
  type WordSegment,
} from '../../../machines/permission/shell-words.ts';

const bare = (text: string): WordSegment[] => [{ text, quoted: false }];

describe('canonicalName', () => {
  it.each([
    ['rm', { name: 'rm' }],
    ['/bin/rm', { name: 'rm' }],
    ['/sbin/reboot', { name: 'reboot' }],
    ['/usr/bin/rm', { name: 'rm' }],
    ['/usr/sbin/useradd', { name: 'useradd' }],
    ['/usr/local/bin/rm', { name: 'rm' }],
    ['/usr/local/sbin/rm', { name: 'rm' }],
  ])('reads the standard binary %s as its bare name, with no other form', (word, expected) => {
    expect(canonicalName(word)).toEqual(expected);
  });

  it.each([
    ['./rm', { name: 'rm', raw: './rm' }],
    ['/opt/tools/rm', { name: 'rm', raw: '/opt/tools/rm' }],
    ['/bin/sub/rm', { name: 'rm', raw: '/bin/sub/rm' }],
    ['x/bin/rm', { name: 'rm', raw: 'x/bin/rm' }],
    ['/usr/lib/bin/rm', { name: 'rm', raw: '/usr/lib/bin/rm' }],
    ['/usr/local/lib/rm', { name: 'rm', raw: '/usr/local/lib/rm' }],
  ])('reads %s as its basename and keeps the path as a second form (not a standard directory)', (word, expected) => {
    expect(canonicalName(word)).toEqual(expected);
  });

  it.each([['dir/'], ['/bin/']])('keeps %s whole: a path ending in / has no basename', (word) => {
    expect(canonicalName(word)).toEqual({ name: word });
  });
});

describe("decodeAnsiC ($'…' as bash decodes it)", () => {
  it.each([
    ['a\\nb', 'a\nb'],
    ['\\t\\r', '\t\r'],
    ['\\a\\b\\e\\E\\f\\v', '\x07\b\x1b\x1b\f\v'],
    ['\\\\\\\'\\"\\?', '\\\'"?'],
    ['\\x41\\x4a1\\xg', 'AJ1\\xg'],
    ['\\x', '\\x'],
    ['\\x7', '\x07'],
    ['\\x414', 'A4'],
    ['\\u00e9\\U0001F600\\uZ', 'é😀\\uZ'],
    ['\\u', '\\u'],
    ['\\U', '\\U'],
    ['\\u00411', 'A1'],
    ['\\U000000411', 'A1'],
    ['\\101\\0101\\7\\8', 'A\b1\x07\\8'],
    ['\\cA\\c', '\x01\\c'],
    ['\\ca', '\x01'],
    ['\\q', '\\q'],
    ['\\qa', '\\qa'],
    ['\\xg1', '\\xg1'],
    ['\\uZ1', '\\uZ1'],
    ['\\UZ1', '\\UZ1'],
    ['end\\', 'end\\'],
    ['plain', 'plain'],
    ['', ''],
  ])("decodes $'%s'", (body, expected) => {
    expect(decodeAnsiC(body)).toBe(expected);
  });

  it("decodes an escape that spells a command name: $'\\x72\\x6d' is rm", () => {
    expect(decodeAnsiC('\\x72\\x6d')).toBe('rm');
    expect(decodeAnsiC('\\162\\155')).toBe('rm');
    expect(decodeAnsiC('\\u0072\\U0000006d')).toBe('rm');
  });

  it('gives U+FFFD for a code point past U+10FFFF instead of throwing', () => {
    expect(decodeAnsiC('\\U110000')).toBe('\ufffd');
    expect(decodeAnsiC('\\U10FFFF')).toBe(String.fromCodePoint(0x10ffff));
  });

  it('keeps an octal escape to one byte (\\777 is 0xff)', () => {
    expect(decodeAnsiC('\\777')).toBe('\xff');
  });
});

describe('expandBraces (unquoted braces as bash expands them)', () => {
  it.each([
    ['a{b,c}d', ['abd', 'acd']],
    ['{a,b}{1,2}', ['a1', 'a2', 'b1', 'b2']],
    ['{1..3}', ['1', '2', '3']],
    ['{3..1}', ['3', '2', '1']],
    ['{1..10..3}', ['1', '4', '7', '10']],
    ['{10..1..-4}', ['10', '6', '2']],
    ['{1..3..0}', ['1', '2', '3']],
    ['{1..30..10}', ['1', '11', '21']],
    ['{1..1}', ['1']],
    ['{a..a}', ['a']],
    ['{a..c}', ['a', 'b', 'c']],
    ['{c..a}', ['c', 'b', 'a']],
    ['{a..e..2}', ['a', 'c', 'e']],
    ['{a..c..-1}', ['a', 'b', 'c']],
    ['{-2..1}', ['-2', '-1', '0', '1']],
    ['{1..a}', ['{1..a}']],
    ['{a..1}', ['{a..1}']],
    ['{1..2..x}', ['{1..2..x}']],
    ['{ab..c}', ['{ab..c}']],
    ['{a}', ['{a}']],
    ['{}', ['{}']],
    ['x{a,{b,c}}y', ['xay', 'xby', 'xcy']],
    ['{a,b', ['{a,b']],
    ['a}b,c{', ['a}b,c{']],
    ['pre{a,b}post{,}', ['preapost', 'preapost', 'prebpost', 'prebpost']],
    ['{x}{a,b}', ['{x}a', '{x}b']],
    ['{1..2}{a..b}', ['1a', '1b', '2a', '2b']],
    ['{{a,b}', ['{a', '{b']],
    ['{a{b,c}', ['{ab', '{ac']],
    ['r{m,x} -rf', ['rm -rf', 'rx -rf']],
    ['plain', ['plain']],
  ])('expands %s', (word, expected) => {
    expect(expandBraces(bare(word))).toEqual(expected);
  });

  it('leaves braces, commas and dots inside quotes alone ({"a,b"} and {1".."3} are literal)', () => {
    expect(
      expandBraces([
        { text: '{', quoted: false },
        { text: 'a,b', quoted: true },
        { text: '}', quoted: false },
      ]),
    ).toEqual(['{a,b}']);
    expect(
      expandBraces([
        { text: '{1', quoted: false },
        { text: '..', quoted: true },
        { text: '3}', quoted: false },
      ]),
    ).toEqual(['{1..3}']);
    expect(expandBraces([{ text: '{a}', quoted: true }])).toEqual(['{a}']);
  });

  it('expands the unquoted braces around a quoted piece (r{"m",x} runs rm)', () => {
    expect(
      expandBraces([
        { text: 'r{', quoted: false },
        { text: 'm', quoted: true },
        { text: ',x}', quoted: false },
      ]),
    ).toEqual(['rm', 'rx']);
  });

  it('allows exactly 256 results and refuses 257 (a sequence or a product), as the gate promises', () => {
    expect(expandBraces(bare('{1..256}'))).toHaveLength(256);
    expect(expandBraces(bare('{1..257}'))).toBeUndefined();
    expect(expandBraces(bare('{1..258}'))).toBeUndefined();
    expect(expandBraces(bare('{1..512..2}'))).toHaveLength(256);
    expect(expandBraces(bare('{a,b}'.repeat(8)))).toHaveLength(256);
    expect(expandBraces(bare(`{a,b}${'{a,b}'.repeat(8)}`))).toBeUndefined();
    expect(expandBraces(bare('{1..100000000}'))).toBeUndefined();
  });

  it('takes the limit it is given', () => {
    expect(expandBraces(bare('{1..3}'), 3)).toEqual(['1', '2', '3']);
    expect(expandBraces(bare('{1..4}'), 3)).toBeUndefined();
    expect(expandBraces(bare('{a,b}{c,d}'), 3)).toBeUndefined();
    expect(expandBraces(bare('{a,b}{c,d}'), 4)).toHaveLength(4);
  });

  it('refuses a too-long sequence inside a word that also has an alternation', () => {
    expect(expandBraces(bare('{a,{1..1000}}'))).toBeUndefined();
    expect(expandBraces(bare('{a,b}{1..1000}'))).toBeUndefined();
  });
});
