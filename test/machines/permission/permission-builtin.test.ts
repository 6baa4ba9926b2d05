/**
 * Built-in rules: denied under any policy (even allow-all), with a message
 * that says they cannot be overridden; look-alikes that are not destructive
 * pass through to the policy.
 */
import fc from 'fast-check';
import {
  BUILTIN_DENY_SUFFIX,
  isGlobOnly,
  isProtectedTarget,
  normalizeTarget,
} from '../../../machines/permission/permission-builtin.ts';
import { decideTerminal, merged } from '../../support/permission-fixtures.ts';
import { propertySeed } from '../../support/seed.ts';

const allowAll = merged({
  default: 'allow',
  tools: { terminal: { default: 'allow', always_allow: [{ pattern: '.*' }] } },
});

const BLOCKED = [
  'rm -rf /',
  'rm -fr /',
  'rm -r -f /',
  'rm -rf -- /',
  'rm --recursive --force /',
  'rm / -rf',
  'rm /',
  'rm -rf /*',
  'rm -rf //',
  'rm -rf /tmp/../..',
  'rm -rf /tmp/../../',
  'rm -rf /tmp /',
  'rm -rf x y /',
  'rm -rf ~',
  'rm -rf ~/',
  'rm -rf ~/*',
  'rm -rf ~root',
  'rm -rf $HOME',
  'rm -rf ${HOME}',
  'rm -rf $HOME/',
  'rm -rf $HOME/foo/..',
  'rm -rf ~/x/../',
  'rm -rf .',
  'rm -rf ./',
  'rm -rf ./*',
  'rm -rf ..',
  'rm -rf ../',
  'rm -rf ../..',
  'rm -rf foo/../..',
  'rm -rf x/..',
  'rm -rf .*',
  'rm -rf /?*',
  'rm -rf "/"',
  "'rm' -rf '/'",
  'sudo rm -rf /',
  '/bin/rm -rf /',
  '\\rm -rf /',
  'bash -c "rm -rf /"',
  'find . -exec rm -rf / \\;',
  'echo $(rm -rf /)',
  'ls && rm -rf ~',
  'rm -rf {/,x}',
  "$'\\x72m' -rf /",
  'rm -rf / "unterminated',
  'RM -RF /',
  'rm -rf ~/..',
  'rm -rf ~/../..',
  'mkfs.ext4 /dev/sda1',
  'mkfs -t ext4 /dev/nvme0n1p1',
  'mkswap /dev/sdb',
  'wipefs -a /dev/sda',
  'dd if=/dev/zero of=/dev/sda bs=1M',
  'sudo dd if=x.img of=/dev/disk2',
  'cat x > /dev/sda',
  'shred /dev/sda',
  ':(){ :|:& };:',
  'bomb(){ bomb|bomb& };bomb',
  'function f { f | f & }; f',
  // The definition is checked in front of the body (a rewrite of one regex that was quadratic in a long word).
  "eval ':(){ :|:& };:'",
  '`bomb () { bomb | bomb & } ; bomb`',
  'x=1; f(){ f|f; }; f',
  'kill -9 -1',
  'kill -- -1',
  'kill -s KILL -1',
  'chmod -R 000 /',
  'chown -R nobody ~',
  'find / -delete',
  'find ~ -depth -delete',
  'rm -rf "$PWD"',
  'rm -rf ${PWD}/',
  'rm -rf ~+',
];

const NOT_BLOCKED = [
  'rm -rf ./build',
  'rm -rf build',
  'rm -rf /tmp/x',
  'rm ~/file.txt',
  'rm -rf ~/project/build',
  'rm -rf ../sibling',
  'rm -rf x/../y',
  'rm -- -x',
  'mkfs.ext4 disk.img',
  'dd if=/dev/zero of=disk.img',
  'dd if=/dev/sda of=backup.img',
  'cat x > /dev/null',
  'kill -9 1234',
  'kill -1 1234',
  'chmod 644 /etc/x',
  'chmod -R u+w ./src',
  'find . -name "*.o" -delete',
  'find / -name x',
  'echo rm -rf /',
  'rm -rf *',
  'rm -rf *.o',
  'rm -rf $PWD/build',
  'f(){ g|g& }; f',
  "echo '{ a|a }'",
  `echo ${'x'.repeat(16_384)}`,
];

describe('built-in rules', () => {
  it.each(BLOCKED)('denies %j even under an allow-all policy', async (input) => {
    const d = await decideTerminal(allowAll, input);
    expect({ outcome: d.outcome, level: d.level }).toEqual({ outcome: 'deny', level: 'builtin' });
    expect(d.reason).toContain(BUILTIN_DENY_SUFFIX);
    expect(d.reason).toMatch(/^Blocked by built-in security rule: /);
  });

  it.each(NOT_BLOCKED)('leaves %j to the policy', async (input) => {
    const d = await decideTerminal(allowAll, input);
    expect(d.level).not.toBe('builtin');
  });

  it('normalizes rm targets lexically', () => {
    expect(
      ['/tmp/../..', '//', '$HOME/foo/..', '${HOME}', '~/x/../..', 'a/../..', './', '', '/a/./b/'].map(normalizeTarget),
    ).toEqual(['/', '/', '~', '~', '~/..', '..', '.', '.', '/a/b']);
    // Only a leading $HOME or $PWD is the home or current directory; later in a path it is a name.
    expect(['$PWD/x', 'x/$HOME', 'x/$PWD', '$HOMEx', '~x/..', '~/a/b', '~/../..'].map(normalizeTarget)).toEqual([
      'x',
      'x/$HOME',
      'x/$PWD',
      '$HOMEx',
      '~x/..',
      '~/a/b',
      '~/../..',
    ]);
    expect(['/', '/*', '~', '~/', '.', '..', '../..', '/.*', '~/.??*'].every(isProtectedTarget)).toBe(true);
    expect(['/tmp', '~/x', './x', '../x', '/tmp/*', 'x'].some(isProtectedTarget)).toBe(false);
  });
});

describe('isGlobOnly (rm targets that are only glob tokens)', () => {
  const seed = propertySeed();
  /** What the rule was written as; it backtracked over every split point (0.5 s for 16 KB of `*`). */
  const ORACLE = /^(\*|\?|\[[^\]]*\]|\.)*[*?[](\*|\?|\[[^\]]*\]|\.)*$/;

  it(`agrees with the regex it replaces on any short word of glob characters (seed ${seed})`, () => {
    const word = fc.array(fc.constantFrom('*', '?', '[', ']', '.', 'a', '-'), { maxLength: 10 }).map((a) => a.join(''));
    fc.assert(
      fc.property(word, (w) => isGlobOnly(w) === ORACLE.test(w)),
      { seed, numRuns: 3_000 },
    );
  });

  it('decides words the regex got stuck on, and still denies rm of such a glob at the root', async () => {
    expect(isGlobOnly(`${'*'.repeat(65_536)}x`)).toBe(false);
    expect(isGlobOnly('*'.repeat(65_536))).toBe(true);
    expect(['*', '.*', '.??*', '[a]*', '[.', '*[', '?', '[a][b]*'].every(isGlobOnly)).toBe(true);
    // `[[`: a lone `[` is the glob, and the second `[` opens no class (no `]` follows), so it is no token.
    expect(['', '.', '..', '[a]', 'a*', '*a', '[a', '[['].some(isGlobOnly)).toBe(false);
    const glob = await decideTerminal(allowAll, `rm -rf /${'*'.repeat(4_000)}`);
    expect({ outcome: glob.outcome, level: glob.level }).toEqual({ outcome: 'deny', level: 'builtin' });
    expect((await decideTerminal(allowAll, `rm -rf /${'*'.repeat(4_000)}x`)).level).not.toBe('builtin');
  });
});
