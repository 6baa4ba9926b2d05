/**
 * Wrappers and shell inputs an audit found read wrong, each letting `rm x` past a deny rule on rm: wrappers the
 * table did not know (chroot, script, unshare, nsenter, setpriv, prlimit, logsave, strace, valgrind, fakeroot,
 * setarch and its aliases, dbus-run-session, sg, capsh), env -S's own escapes, `source --`, and a bash startup
 * file naming the here-string. Each case pins the whole unwrap.
 */
import { decodeEnvSplit } from '../../../machines/permission/shell-wrapper-specs.ts';
import { unwrapCommand, WRAPPERS } from '../../../machines/permission/shell-wrappers.ts';
import { readsScriptFromStdin } from '../../../machines/permission/shell-stdin-readers.ts';

const w = (line: string) => unwrapCommand(line.split(' '));
const RM = ['rm', 'x'];

describe('unwrapCommand: the wrappers the audit found', () => {
  it.each([
    ['chroot / rm x', 'chroot'],
    ['chroot --userspec 0:0 --groups 0 --skip-chdir / rm x', 'chroot'],
    ['chroot --userspec=0:0 / rm x', 'chroot'],
    ['unshare rm x', 'unshare'],
    ['unshare -m -U -r --fork rm x', 'unshare'],
    ['unshare --mount=/x --kill-child rm x', 'unshare'],
    ['unshare -R / -w /tmp -S 0 -G 0 rm x', 'unshare'],
    ['unshare --root / --wd /tmp --setuid 0 --setgid 0 --propagation private --setgroups deny rm x', 'unshare'],
    ['unshare --map-user 0 --map-group 0 --map-users 0,0,1 --map-groups 0,0,1 rm x', 'unshare'],
    ['unshare --monotonic 1 --boottime 1 rm x', 'unshare'],
    ['nsenter -t 1 rm x', 'nsenter'],
    ['nsenter -t1 -m -u -i -n -p rm x', 'nsenter'],
    ['nsenter --target 1 -S 0 -G 0 -W /tmp -r -w rm x', 'nsenter'],
    ['nsenter --target=1 --wdns /tmp rm x', 'nsenter'],
    ['setpriv rm x', 'setpriv'],
    ['setpriv --reuid 0 --regid 0 --clear-groups --nnp rm x', 'setpriv'],
    ['setpriv --groups 0 --inh-caps -all --bounding-set -all --pdeathsig keep rm x', 'setpriv'],
    ['prlimit rm x', 'prlimit'],
    ['prlimit --nofile=10 --cpu=1 -o RESOURCE --pid 1 rm x', 'prlimit'],
    ['logsave /dev/null rm x', 'logsave'],
    ['logsave -a -s -v log rm x', 'logsave'],
    ['strace rm x', 'strace'],
    ['strace -o /dev/null rm x', 'strace'],
    ['strace -f -e trace=none -s 5 -a 40 -E A=1 -u root rm x', 'strace'],
    ['strace --output /dev/null --string-limit 5 --trace none --env A=1 rm x', 'strace'],
    ['strace --daemonize=grandchild -qq --absolute-timestamps rm x', 'strace'],
    ['valgrind rm x', 'valgrind'],
    ['valgrind --tool=none -q rm x', 'valgrind'],
    ['fakeroot rm x', 'fakeroot'],
    ['fakeroot -l lib.so -f faked -i load -s save -u -b 3 -- rm x', 'fakeroot'],
    ['fakeroot --lib lib.so --faked faked --fd-base 3 rm x', 'fakeroot'],
    ['setarch x86_64 rm x', 'setarch'],
    ['setarch x86_64 -R -3 --uname-2.6 rm x', 'setarch'],
    ['setarch -R rm x', 'setarch'],
    ['linux64 rm x', 'linux64'],
    ['linux32 -R rm x', 'linux32'],
    ['i386 rm x', 'i386'],
    ['x86_64 rm x', 'x86_64'],
    ['dbus-run-session -- rm x', 'dbus-run-session'],
    ['dbus-run-session --config-file /dev/null rm x', 'dbus-run-session'],
    ['dbus-run-session --dbus-daemon=/bin/true rm x', 'dbus-run-session'],
  ])('%s runs rm x', (line, via) => {
    expect(w(line)).toEqual([{ via, argv: RM }]);
  });

  it.each([
    ['script -qc rm /dev/null', [{ via: 'script -c', script: 'rm' }]],
    ['script -c rm', [{ via: 'script -c', script: 'rm' }]],
    ['script --command rm /dev/null', [{ via: 'script --command', script: 'rm' }]],
    ['script --command=rm /dev/null', [{ via: 'script --command', script: 'rm' }]],
    ['script -a -f -E never -o 1 -T t -I i -O o -B b -m classic -c rm log', [{ via: 'script -c', script: 'rm' }]],
    // util-linux getopt permutes: the option after the log file is read too, and the file is no command.
    ['script /dev/null -c rm', [{ via: 'script -c', script: 'rm' }]],
    ['script -q /dev/null', []],
    ['sg root -c rm', [{ via: 'sg -c', script: 'rm' }]],
    ['sg root rm', [{ via: 'sg', script: 'rm' }]],
    ['sg - root -c rm', [{ via: 'sg -c', script: 'rm' }]],
    ['sg root', []],
    ['capsh -- -c rm', [{ via: 'capsh --', argv: ['bash', '-c', 'rm'] }]],
    ['capsh --drop=cap_sys_admin -- -c rm', [{ via: 'capsh --', argv: ['bash', '-c', 'rm'] }]],
    ['capsh --shell=/bin/rm -- x', [{ via: 'capsh --', argv: ['/bin/rm', 'x'] }]],
    ['capsh == -+ -c rm', [{ via: 'capsh -+', argv: ['bash', '-c', 'rm'] }]],
    ['capsh --print', []],
  ])('%s', (line, expected) => {
    expect(w(line)).toEqual(expected);
  });

  it('lists them among the wrappers', () => {
    for (const name of ['chroot', 'script', 'unshare', 'strace', 'setarch', 'linux64', 'sg', 'capsh', 'fakeroot'])
      expect(WRAPPERS).toContain(name);
  });
});

describe("env -S: GNU env's own escapes and quotes", () => {
  it.each([
    // Plain strings are as they were.
    ['rm -f x', 'rm -f x'],
    ['rm\\_x', "'rm' 'x'"],
    ['rm\\tx', "'rm\tx'"],
    ['"rm\\_x" y', "'rm x' 'y'"],
    ["'a\\\\b' 'c\\'d' 'e\\nf' '$x'", "'a\\b' 'c'\\''d' 'e\\nf' '$x'"],
    ['a${HOME}b "${HOME}" \'\'', `'a'"\${HOME}"'b' "\${HOME}" ''`],
    ['rm x #y', "'rm' 'x'"],
    ['rm x a#b', "'rm' 'x' 'a#b'"],
    ['rm\\cx y', "'rm'"],
    ['rm \\#x \\$y \\"z', "'rm' '#x' '$y' '\"z'"],
    // What env refuses to run stays as it was.
    ['rm\\qx', 'rm\\qx'],
    ['rm $x', 'rm $x'],
    ['"rm x', '"rm x'],
    ['"a\\cb"', '"a\\cb"'],
  ])('%j', (input, expected) => {
    expect(decodeEnvSplit(input)).toBe(expected);
  });

  it('decodes the string before it is judged, with the words after it', () => {
    expect(unwrapCommand(['env', '-S', 'rm\\_-f', 'x'])).toEqual([
      { via: 'env -S', script: "'rm' '-f'" },
      { via: 'env', argv: ['x'] },
      { via: 'env -S', script: "'rm' '-f' 'x'" },
    ]);
    expect(unwrapCommand(['env', '--split-string=rm\\_x'])).toEqual([
      { via: 'env --split-string', script: "'rm' 'x'" },
    ]);
  });
});

describe('readsScriptFromStdin: source -- and a startup file on a descriptor', () => {
  it.each([
    [['source', '--', '/dev/stdin'], true],
    [['.', '--', '/dev/fd/0'], true],
    [['source', '--', './env.sh'], false],
    [['source', '--'], false],
    [['bash', '--rcfile', '/dev/stdin', '-ic', ':'], true],
    [['bash', '--init-file', '/dev/fd/0', '-ic', ':'], true],
    [['bash', '--rcfile=/dev/stdin', '-c', ':'], true],
    [['bash', '--rcfile', '/home/u/.bashrc', '-ic', ':'], false],
    [['bash', '--init-file', '-c', ':'], false],
  ])('%j → %s', (argv, expected) => {
    expect(readsScriptFromStdin(argv)).toBe(expected);
  });
});
