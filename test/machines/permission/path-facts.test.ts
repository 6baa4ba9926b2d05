/**
 * The path facts the gate judges file tools by (permission-paths.ts) and the exact rules "always" learns
 * (permission-patterns.ts), value by value: the forms a rule is matched against, each always-ask condition
 * with its scope and words, and the exact-rule round trip with its edges. Written for the survivors of the
 * `policy-paths` mutation run (docs/quality.md).
 */
import { describe, expect, it } from 'vitest';
import { alwaysAsk, namesPolicy, pathForms } from '../../../machines/permission/permission-paths.ts';
import { exactRule, exactText } from '../../../machines/permission/permission-patterns.ts';

describe('pathForms', () => {
  const facts = { roots: ['/ws'] };
  it('gives a relative path as given, inside the first root', () => {
    expect(pathForms('src/a.ts', facts)).toEqual({
      raw: 'src/a.ts',
      normalized: 'src/a.ts',
      absolute: '/ws/src/a.ts',
      inside: true,
    });
  });
  it('drops every leading ./ from the raw form', () => {
    expect(pathForms('./././src/a.ts', facts).raw).toBe('src/a.ts');
  });
  it('makes an absolute path inside a root relative to it, in both forms', () => {
    expect(pathForms('/ws/src/../b.ts', facts)).toEqual({
      raw: 'src/../b.ts',
      normalized: 'b.ts',
      absolute: '/ws/b.ts',
      inside: true,
    });
  });
  it('keeps a path outside every root absolute, and a sibling with the same prefix is outside', () => {
    expect(pathForms('/other/x', facts)).toEqual({
      raw: '/other/x',
      normalized: '/other/x',
      absolute: '/other/x',
      inside: false,
    });
    expect(pathForms('/wsx/y', facts)).toEqual({
      raw: '/wsx/y',
      normalized: '/wsx/y',
      absolute: '/wsx/y',
      inside: false,
    });
  });
  it('finds the root a path is in among several', () => {
    expect(pathForms('/b/x', { roots: ['/a', '/b'] })).toEqual({
      raw: 'x',
      normalized: 'x',
      absolute: '/b/x',
      inside: true,
    });
  });
});

describe('alwaysAsk', () => {
  it('a path inside that resolves outside is a symlink escape, named with its target', () => {
    expect(alwaysAsk('link', { roots: ['/ws'], resolved: '/etc/passwd' })).toEqual({
      scope: 'symlink',
      reason: '`link` points outside the project (symlink to `/etc/passwd`)',
    });
  });
  it('a path that resolves inside one of the real roots asks nothing', () => {
    const facts = { roots: ['/home/u/ws', '/home/u/b'], realRoots: ['/data/ws', '/data/b'] };
    expect(alwaysAsk('a', { ...facts, resolved: '/data/ws/a' })).toBeUndefined();
    expect(alwaysAsk('a', { ...facts, resolved: '/home/u/ws/a' })?.scope).toBe('symlink');
  });
  it('a path outside that resolves outside is "outside", not a symlink escape', () => {
    expect(alwaysAsk('/etc/x', { roots: ['/ws'], resolved: '/etc/x' })).toEqual({
      scope: 'outside',
      reason: '`/etc/x` is outside the workspace',
    });
    expect(alwaysAsk('/etc/passwd', { roots: ['/ws'] })).toEqual({
      scope: 'outside',
      reason: '`/etc/passwd` is outside the workspace',
    });
  });
  it('.git and .skein, in any case, are protected; a name that only starts like them is not', () => {
    const protectedDir = {
      scope: 'sensitive',
      reason: '`.git/config` is inside a protected directory (.git or .skein)',
    };
    expect(alwaysAsk('.git/config', { roots: ['/ws'] })).toEqual(protectedDir);
    expect(alwaysAsk('sub/.SKEIN/policy.json', { roots: ['/ws'] })?.scope).toBe('sensitive');
    expect(alwaysAsk('src/.gitignore', { roots: ['/ws'] })).toBeUndefined();
    expect(alwaysAsk('.skeins/x', { roots: ['/ws'] })).toBeUndefined();
  });
  it('skein.config.json and .gitmodules, in any case, ask: read later outside the sandbox', () => {
    expect(alwaysAsk('skein.config.json', { roots: ['/ws'] })).toEqual({
      scope: 'sensitive',
      reason: '`skein.config.json` is read later outside the sandbox (skein.config.json, .gitmodules)',
    });
    expect(alwaysAsk('/ws/.GITMODULES', { roots: ['/ws'] })?.scope).toBe('sensitive');
    expect(alwaysAsk('x', { roots: ['/ws'], resolved: '/ws/skein.config.json' })?.scope).toBe('sensitive');
    expect(alwaysAsk('docs/skein.config.json.md', { roots: ['/ws'] })).toBeUndefined();
    expect(namesPolicy('cp x skein.config.json')).toBe('skein.config.json');
  });
  it('a link that resolves into .git inside the workspace is protected', () => {
    expect(alwaysAsk('innocent', { roots: ['/ws'], resolved: '/ws/.git/config' })?.scope).toBe('sensitive');
    expect(alwaysAsk('innocent', { roots: ['/ws'], resolved: '/ws/docs/x' })).toBeUndefined();
  });
  it('a policy file asks as such, given absolute, relative or through a link', () => {
    const policy = { scope: 'sensitive', reason: '`/home/u/.config/skein/policy.json` is a permission policy file' };
    const global = ['/home/u/.config/skein/policy.json'];
    expect(alwaysAsk('/home/u/.config/skein/policy.json', { roots: ['/ws'], sensitive: global })).toEqual(policy);
    expect(alwaysAsk('cfg/policy.json', { roots: ['/ws'], sensitive: ['/ws/cfg/policy.json'] })).toEqual({
      scope: 'sensitive',
      reason: '`cfg/policy.json` is a permission policy file',
    });
    expect(
      alwaysAsk('p', { roots: ['/ws'], resolved: '/ws/cfg/policy.json', sensitive: ['/ws/cfg/policy.json'] }),
    ).toEqual({
      scope: 'sensitive',
      reason: '`p` is a permission policy file',
    });
    expect(alwaysAsk('cfg/other.json', { roots: ['/ws'], sensitive: ['/ws/cfg/policy.json'] })).toBeUndefined();
  });
  it('a link to a policy file asks when the workspace is reached through a link too (its real path differs)', () => {
    // The workspace /ws is /real/ws; the policy file is listed by the workspace path; the link resolves to the
    // real path, which only its path relative to the real root ties to the listed file.
    const facts = { roots: ['/ws'], realRoots: ['/real/ws'], sensitive: ['/ws/cfg/policy.json'] };
    expect(alwaysAsk('p', { ...facts, resolved: '/real/ws/cfg/policy.json' })).toEqual({
      scope: 'sensitive',
      reason: '`p` is a permission policy file',
    });
    expect(alwaysAsk('p', { ...facts, resolved: '/real/ws/cfg/other.json' })).toBeUndefined();
  });
});

describe('namesPolicy edges', () => {
  it.each([
    ['cat skein/policy.json', 'skein/policy.json'],
    ['cat .SK*/x', '.SK*/x'],
    ['mv a .[^x]kein/b', '.[^x]kein/b'],
    ['rm -r *', '*'],
  ])('%s names the policy through %s', (command, word) => expect(namesPolicy(command)).toBe(word));
  it.each([['mv a .[^s]kein/b'], ['cat skein/other.json'], ['cat policy.json/skein']])('%s names nothing', (command) =>
    expect(namesPolicy(command)).toBeUndefined(),
  );
});

describe('exactRule and exactText', () => {
  it('anchors, escapes and marks case-sensitive', () => {
    expect(exactRule('src/a.ts', 'path')).toBe('(?-i)^src/a\\.ts$');
    expect(exactRule('/etc/x')).toBe('(?-i)^/etc/x$');
  });
  it('learns nothing for an empty text, or a path that is absolute or climbs out', () => {
    expect(exactRule('')).toBeUndefined();
    for (const p of ['/etc/x', '..', '../x']) expect(exactRule(p, 'path')).toBeUndefined();
    expect(exactRule('..x', 'path')).toBe('(?-i)^\\.\\.x$');
  });
  it('keeps a rule of exactly the longest length a policy accepts, and no longer', () => {
    expect(exactRule('a'.repeat(4089))?.length).toBe(4096);
    expect(exactRule('a'.repeat(4090))).toBeUndefined();
  });
  it('reads back the text of an exact rule and of nothing else', () => {
    expect(exactText('(?-i)^src/a\\.ts$')).toBe('src/a.ts');
    expect(exactText(exactRule('git push --force "x*"')!)).toBe('git push --force "x*"');
    for (const p of ['^src$', '(?-i)^src', '(?-i)^a\\$', '(?-i)^a\\b$', '(?-i)^a.b$', '(?-i)^$', '(?-i)src$']) {
      expect(exactText(p), p).toBeUndefined();
    }
  });
});
