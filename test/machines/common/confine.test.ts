/**
 * Workspace confinement, lexically: inside means equal to the root or below it by whole components. The
 * sibling test is issue 10's planted bug: confinement written as `path.startsWith(root)` lets
 * `../ws-evil/x` through, and this must fail then.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { confine, isInside, normalizePath, relativeInside } from '../../../machines/common/confine.ts';
import { propertySeed } from '../../support/seed.ts';

const ROOTS = [['/w/ws']];

describe('confine', () => {
  it.each([
    ['../ws-evil/x', '/w/ws-evil/x'],
    ['/w/ws-evil/x', '/w/ws-evil/x'],
    ['/w/wsx', '/w/wsx'],
    ['../ws2', '/w/ws2'],
    ['..', '/w'],
    ['../..', '/'],
    ['a/../../ws-evil', '/w/ws-evil'],
    ['/etc/passwd', '/etc/passwd'],
    ['/w', '/w'],
    ['./../ws.bak/x', '/w/ws.bak/x'],
  ])('refuses %j: it lands at %s, outside /w/ws', (given, absolute) => {
    expect(confine(ROOTS, given)).toEqual({ ok: false, absolute });
  });

  it.each([
    ['x', ['x']],
    ['a/b/c.txt', ['a', 'b', 'c.txt']],
    ['./a//b/./c', ['a', 'b', 'c']],
    ['a/../b', ['b']],
    ['../ws/x', ['x']],
    ['/w/ws/x', ['x']],
    ['/w/ws', []],
    ['.', []],
    ['..foo/x', ['..foo', 'x']],
    ['/w/ws/../ws/y', ['y']],
  ])('accepts %j as the components %j below the root', (given, parts) => {
    expect(confine(ROOTS, given)).toEqual({ ok: true, root: 0, parts });
  });

  it('finds the root a path is under among several, by any of its spellings', () => {
    const roots = [['/real/a', '/link/a'], ['/real/b']];
    expect(confine(roots, '/link/a/f')).toEqual({ ok: true, root: 0, parts: ['f'] });
    expect(confine(roots, '/real/b/g/h')).toEqual({ ok: true, root: 1, parts: ['g', 'h'] });
    expect(confine(roots, 'rel')).toEqual({ ok: true, root: 0, parts: ['rel'] });
    expect(confine(roots, '/real/ab')).toEqual({ ok: false, absolute: '/real/ab' });
  });

  it('isInside and relativeInside compare whole components', () => {
    expect(isInside('/w/ws', '/w/ws-evil')).toBe(false);
    expect(isInside('/w/ws', '/w/ws/')).toBe(true);
    expect(isInside('/w/ws/', '/w/ws/a')).toBe(true);
    expect(isInside('/', '/anything')).toBe(true);
    expect(isInside('/w/ws', 'relative')).toBe(false);
    expect(relativeInside('/w/ws', '/w/ws/a/../b')).toBe('b');
    expect(relativeInside('/w/ws', '/w/ws')).toBe('.');
    expect(relativeInside('/w/ws', '/w/ws/../ws-evil')).toBeUndefined();
    expect(normalizePath('/../../a/./b/')).toBe('/a/b');
  });

  const seed = propertySeed();
  it(`property: whatever the path, an accepted one rebuilds to a path under the root (fast-check seed ${seed})`, () => {
    const part = fc.constantFrom('..', '.', '', 'ws', 'ws-evil', 'w', 'a', '..a', 'ws.bak');
    fc.assert(
      fc.property(fc.boolean(), fc.array(part, { maxLength: 8 }), (absolute, parts) => {
        const given = (absolute ? '/' : '') + parts.join('/');
        const r = confine(ROOTS, given);
        if (r.ok) {
          const rebuilt = ['/w/ws', ...r.parts].join('/');
          expect(rebuilt === '/w/ws' || rebuilt.startsWith('/w/ws/')).toBe(true);
          expect(r.parts).not.toContain('..');
          expect(r.parts).not.toContain('.');
          expect(r.parts).not.toContain('');
        } else {
          expect(r.absolute === '/w/ws' || r.absolute.startsWith('/w/ws/')).toBe(false);
        }
      }),
      { seed, numRuns: 2000 },
    );
  });
});

describe('normalizePath, relativeInside and confine at their edges', () => {
  it.each([
    ['', '.'],
    ['.', '.'],
    ['a/./b//c/', 'a/b/c'],
    ['a/..', '.'],
    ['a/../..', '..'],
    ['../x', '../x'],
    ['../../x', '../../x'],
    ['a/../../b', '../b'],
    ['/..', '/'],
    ['/a/../..', '/'],
    ['/a/b/../c', '/a/c'],
    ['//a//b/', '/a/b'],
  ])('normalizes %j to %j', (given, expected) => {
    expect(normalizePath(given)).toBe(expected);
  });

  it('answers only for absolute roots and paths', () => {
    expect(relativeInside('ws', 'ws/a')).toBeUndefined();
    expect(relativeInside('/ws', 'ws/a')).toBeUndefined();
    expect(relativeInside('ws', '/ws/a')).toBeUndefined();
    expect(relativeInside('/ws', '/ws/a')).toBe('a');
  });

  it('treats the filesystem root as containing every absolute path', () => {
    expect(relativeInside('/', '/')).toBe('.');
    expect(relativeInside('/', '/etc/passwd')).toBe('etc/passwd');
    expect(relativeInside('/w/ws/', '/w/ws')).toBe('.');
  });

  it('resolves a relative path against the first spelling of the first root, and / without roots', () => {
    expect(confine([], 'etc/x')).toEqual({ ok: false, absolute: '/etc/x' });
    expect(confine([['/w/ws', '/real/ws'], ['/w/other']], 'a/b')).toEqual({ ok: true, root: 0, parts: ['a', 'b'] });
    expect(confine([['/w/ws', '/real/ws'], ['/w/other']], '/real/ws/a')).toEqual({ ok: true, root: 0, parts: ['a'] });
    expect(confine([['/w/ws'], ['/w/other']], '/w/other/z')).toEqual({ ok: true, root: 1, parts: ['z'] });
    expect(confine([['/w/ws'], ['/w/other']], '/w/ws')).toEqual({ ok: true, root: 0, parts: [] });
    expect(confine([['/w/ws']], '../ws-evil/x')).toEqual({ ok: false, absolute: '/w/ws-evil/x' });
  });
});
