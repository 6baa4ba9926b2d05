/**
 * The built-in rules at their edges, written from the policy-decision mutation run (issue 10): each device
 * name, command name and flag form the rules list, the look-alikes just outside them, the whitespace reading
 * of an unparseable input, and the words of each denial. Gate holes found on the way are pinned first.
 */
import { builtinDenial } from '../../../machines/permission/permission-builtin.ts';
import { decideTerminal, merged } from '../../support/permission-fixtures.ts';

const allowAll = merged({
  default: 'allow',
  tools: { terminal: { default: 'allow', always_allow: [{ pattern: '.*' }] } },
});

async function builtin(input: string): Promise<string | undefined> {
  const d = await decideTerminal(allowAll, input);
  return d.level === 'builtin' ? d.reason : undefined;
}

describe('gate holes: allowed under an allow-all policy before these fixes', () => {
  it.each([
    // find's own options come before its starting points.
    'find -L / -delete',
    'find -P ~ -delete',
    'find -H -D tree -O3 / -delete',
    // Grouping, `-print` and `!` select nothing: everything is still deleted.
    'find / \\( -delete \\)',
    'find / -print -delete',
    'find ~ -true -a -delete',
    'find / ! -delete',
    // `-exec rm` of what was found is -delete by another name.
    'find / -exec rm -rf {} \\;',
    'find ~ -execdir /bin/rm -r {} +',
    'find / -exec rm {} + -print',
    'find / -exec rm -rf {} \\; -exec rm -f {} \\;',
    'find / -exec rm -rf {} /tmp/x \\;',
    // An -exec that does not name `{}` runs one command for every file: it lets all through (or none).
    'find / -exec rm -f /tmp/x \\; -exec rm -rf {} +',
    'find / -exec true \\; -delete',
    // find puts the name wherever `{}` is in a word.
    'find ~ -exec rm -rf {}/ \\;',
    // udev's links to a disk, and a device path that is only lexically different.
    'dd if=/dev/zero of=/dev/disk/by-id/nvme-Samsung_SSD_970',
    'wipefs -a /dev/block/8:0',
    'mkfs.ext4 /dev/nbd0',
    'dd if=/dev/zero of=/dev/../dev/sda',
    'cat x > /dev/./sda',
    // A fork bomb behind quotes or ANSI-C escapes, seen only in the canonical text.
    "bash -c ':()'{' :|:& };:'",
    "bash -c $':(){\\x20:|:&\\x20};:'",
    "sh -c 'b()'\"{ b|b& }\"'; b'",
  ])('denies %j', async (input) => {
    expect(await builtin(input)).toBeDefined();
  });
});

describe('every device, command and flag form the rules name', () => {
  it.each([
    '-depth',
    '-xdev',
    '-mount',
    '-maxdepth 20',
    '-mindepth 1',
    '-noleaf',
    '-ignore_readdir_race',
    '-P',
    '-L',
    '-H',
    '-and -true',
    '-print0',
  ])('find / %s -delete', async (words) => {
    expect(await builtin(`find / ${words} -delete`)).toBeDefined();
  });

  it.each([
    'sdb',
    'hda',
    'vda',
    'xvda',
    'nvme0n1',
    'mmcblk0',
    'disk2',
    'rdisk2',
    'md0',
    'dm-0',
    'mapper/vg-root',
    'loop0',
    'sr0',
  ])('dd onto /dev/%s', async (dev) => {
    expect(await builtin(`dd if=/dev/zero of=/dev/${dev}`)).toContain(`would overwrite the disk device /dev/${dev}.`);
  });

  it.each([
    'mke2fs /dev/sdb1',
    'blkdiscard /dev/nvme0n1',
    'mkfs /dev/sdb',
    'mkfs.xfs -f /dev/vdb',
    'cat x > //dev//sda',
    'cat x >>/dev/sda',
    'cat x &>/dev/sdb',
    'chmod -fR 777 /',
    'chmod --recursive 777 ~',
    'chgrp -R staff /',
    'chown -hR x:x .',
    'kill -1',
    'kill -n 9 -1',
    'kill -KILL -1',
    'kill -9 -- -1',
    'kill -- -1 1234',
    'kill -1 -1',
    'rm -rf /..',
    'rm -rf -- -/..',
    'rm -rf ~root/..',
    'find ~/.. -delete',
    'find ../.. -delete',
    'bomb()  {  bomb  |  bomb  &  }  ;  bomb',
    ':(){\n:|:&\n};:',
    ':(){ :|:&};:',
    'f(){ f|f& }\nf',
    'longname_bomb(){ longname_bomb|longname_bomb& };longname_bomb',
    'f ( ) { f | f & } ; f',
    'function fork_it { fork_it | fork_it & }; fork_it',
  ])('denies %j', async (input) => {
    expect(await builtin(input)).toBeDefined();
  });

  it.each([
    'rm -rf backup~',
    'rm -rf $HOMEDIR',
    'rm -rf $PWD.',
    'rm -rf ab',
    'rm -rf ab/cd',
    'rm -rf ../ab',
    'rm -rf ~/ab',
    'rm -rf a.',
    'rm -rf a..',
    'rm -rf ../../x',
    // rm reads a word that starts with `-` (before `--`) as options, and refuses this one (`invalid option -- '/'`).
    'rm -rf -/..',
    'chown ann-R /',
    'chmod 755 /',
    'chmod -v 755 ~',
    'find /tmp /var',
    'find',
    'find / ! -name keep -delete',
    'find -L / -name x -delete',
    'find / -name x -exec rm {} +',
    'find / -exec rm -rf {}',
    'find / -exec rm -rf /tmp/x \\;',
    'find / -exec rm -rf \\;',
    'find / -exec echo {} +',
    'find . -exec rm -rf {} +',
    'find / -exec rm -rf {} \\; -exec echo {} \\;',
    'find / -exec',
    // Filters: -execdir runs in each file's directory, and `{}.keep` or `/tmp/{}.bak` name other files.
    'find / -execdir test -e keep \\; -delete',
    'find / -exec test -e {}.keep \\; -delete',
    'find / -exec rm -f /tmp/{}.bak \\;',
    // -ok asks at the terminal for each file: left to the policy.
    'find / -ok rm -rf {} \\;',
    'mkfs_check /dev/sda',
    'my-mkfs /dev/sda',
    'dd if=/dev/sda of=/tmp/dev/sda.img',
    'cat x > backup/dev/sda.img',
    'dd if=x.img of=backup/dev/disk/by-id/x.img',
    'kill -s HUP 1234',
    'kill -HUP 1 2',
    'ls -1',
    'find .. -delete',
    'case $x in ff) { f|f& } ;; esac',
    'echo a b { a b|a b }',
    'git commit -m "fix; rm -rf / is gone"',
  ])('leaves the look-alike %j to the policy', async (input) => {
    expect(await builtin(input)).toBeUndefined();
  });
});

describe('an unparseable input is read by its words and separators', () => {
  it.each([
    'ls|rm -rf / "',
    'ls&rm -rf / "',
    'ls;rm -rf / "',
    'ls\nrm -rf / "',
    '(rm -rf / "',
    'ls)rm -rf / "',
    '{rm -rf /;} "',
    '`rm -rf / "',
    'ls}rm -rf / "',
    'rm -rf "/" "x',
    "rm -rf '/' \"x",
    'r\\m -rf / "x',
    '/bin/rm -rf / "x',
    '  rm -rf / "x',
  ])('denies %j', async (input) => {
    expect(await builtin(input)).toBeDefined();
  });

  it.each(['rm -rf build "', 'rm -rf ""', "rm -rf '' x", '(ls "x', 'ls; ; "x'])(
    'leaves %j to the policy',
    async (input) => {
      expect(await builtin(input)).toBeUndefined();
    },
  );
});

describe('what each denial says', () => {
  it.each([
    ['rm -rf /', '"rm -rf /" would delete the root directory (/)'],
    ['rm -rf /tmp/../..', '"rm -rf /tmp/../.." would delete the root directory (/tmp/../.. is /)'],
    ['rm -rf /*', '"rm -rf /*" would delete the entries of the root directory (/*)'],
    ['rm -rf ~', '"rm -rf ~" would delete the home directory (~)'],
    ['rm -rf ~root', '"rm -rf ~root" would delete the home directory (~root)'],
    ['rm -rf $HOME/*', '"rm -rf $HOME/*" would delete the entries of the home directory ($HOME/* is ~/*)'],
    ['rm -rf ~/..', '"rm -rf ~/.." would delete a parent directory (~/..)'],
    ['rm -rf .', '"rm -rf ." would delete the current directory (.)'],
    ['rm -rf ./*', '"rm -rf ./*" would delete the entries of the current directory (./* is *)'],
    ['rm -rf ../..', '"rm -rf ../.." would delete a parent directory (../..)'],
    ['rm -rf ../*', '"rm -rf ../*" would delete the entries of a parent directory (../*)'],
    ['rm -rf ~/../*', '"rm -rf ~/../*" would delete the entries of a parent directory (~/../*)'],
    ['chmod -R 000 /', '"chmod -R 000 /" would recursively change the root directory (/)'],
    ['find ~ -delete', '"find ~ -delete" would delete everything under the home directory (~)'],
    ['mkfs.ext4 /dev/sda1', '"mkfs.ext4 /dev/sda1" would destroy the file system on /dev/sda1'],
    ['dd if=x of=/dev/sda', '"dd if=x of=/dev/sda" would overwrite the disk device /dev/sda'],
    ['cat x > /dev/sda', '"> /dev/sda" would overwrite the disk device /dev/sda'],
    ['kill -9 -1', '"kill -9 -1" would kill every process you own'],
    [':(){ :|:& };:', '":(){ :|:& };:" is a fork bomb'],
  ])('%j', async (input, what) => {
    expect(await builtin(input)).toBe(
      `Blocked by built-in security rule: ${what}. This operation is considered too harmful to be allowed, ` +
        'and cannot be overridden by settings or approvals.',
    );
  });

  it('clips a long command to 119 characters and an ellipsis', async () => {
    const long = `rm -rf / ${'x'.repeat(200)}`;
    expect(await builtin(long)).toContain(`"${long.slice(0, 119)}…" would delete the root directory (/)`);
    const fits = `rm -rf / ${'x'.repeat(111)}`;
    expect(fits).toHaveLength(120);
    expect(await builtin(fits)).toContain(`"${fits}" would delete`);
    const bomb = `:(){ :|:& };: ${'#'.repeat(200)}`;
    expect(await builtin(bomb)).toContain(`"${bomb.slice(0, 119)}…" is a fork bomb`);
  });

  it('is undefined for a split with nothing to deny, and ignores pipelines and empty commands', () => {
    const split = {
      commands: [
        { kind: 'pipeline' as const, text: 'rm -rf / | cat', forms: ['rm -rf / | cat'], argv: [] },
        { kind: 'command' as const, text: '', forms: [''], argv: [] },
      ],
      unsafe: [],
    };
    expect(builtinDenial('rm -rf / | cat', split)).toBeUndefined();
  });
});
