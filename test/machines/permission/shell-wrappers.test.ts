/**
 * What each command wrapper runs, as the gate sees it: the inner argv or script of every argument shape
 * (short options with attached or separate values, long options with and without `=`, clusters, `--`,
 * assignments, positional operands). A wrong unwrap hides the inner command from the deny rules, so each
 * case pins the whole result. The hostile shapes at the end went through the gate as something else
 * before (`su root -c …`, `flock <file> -c …`, `sudo -R / …`).
 */
import { unwrapCommand, WRAPPERS } from '../../../machines/permission/shell-wrappers.ts';
import { readsScriptFromStdin } from '../../../machines/permission/shell-stdin-readers.ts';
import { BYPASS_POLICY, decideTerminal, merged } from '../../support/permission-fixtures.ts';

const w = (line: string) => unwrapCommand(line.split(' '));
const RM = ['rm', '-rf', '/'];

describe('unwrapCommand: the argv a wrapper runs', () => {
  it.each([
    // sudo: every option that takes a value, attached, separate, long, long with =
    ['sudo rm -rf /', 'sudo'],
    ['sudo -u root rm -rf /', 'sudo'],
    ['sudo -uroot rm -rf /', 'sudo'],
    ['sudo -iu root rm -rf /', 'sudo'],
    ['sudo -E -H -n rm -rf /', 'sudo'],
    ['sudo -g wheel -C 3 -D /tmp -p pw -r role -t type -U me -T 5 rm -rf /', 'sudo'],
    ['sudo --user root --group g --chdir /x --prompt p rm -rf /', 'sudo'],
    ['sudo --role r --type t --other-user o --host h --close-from 3 --command-timeout 5 rm -rf /', 'sudo'],
    ['sudo --user=root --preserve-env=A,B --login rm -rf /', 'sudo'],
    ['sudo -- rm -rf /', 'sudo'],
    ['sudo -R / rm -rf /', 'sudo'],
    ['sudo --chroot / rm -rf /', 'sudo'],
    ['sudo --login-class c --auth-type t rm -rf /', 'sudo'],
    ['doas rm -rf /', 'doas'],
    ['doas -u root -C /etc/doas.conf rm -rf /', 'doas'],
    ['doas -n rm -rf /', 'doas'],
    ['pkexec --user root rm -rf /', 'pkexec'],
    ['pkexec --disable-internal-agent rm -rf /', 'pkexec'],
    ['runuser -u root -- rm -rf /', 'runuser'],
    ['runuser -u root -g g -G h rm -rf /', 'runuser'],
    ['runuser --user=root rm -rf /', 'runuser'],
    ['env -i rm -rf /', 'env'],
    ['env -u HOME -C /tmp rm -rf /', 'env'],
    ['env --unset HOME --chdir /tmp rm -rf /', 'env'],
    ['env -P /bin rm -rf /', 'env'],
    ['env -uHOME -- rm -rf /', 'env'],
    ['command -p rm -rf /', 'command'],
    ['builtin rm -rf /', 'builtin'],
    ['exec -a name rm -rf /', 'exec'],
    ['exec -l -c rm -rf /', 'exec'],
    ['nice rm -rf /', 'nice'],
    ['nice -n 5 rm -rf /', 'nice'],
    ['nice -n5 rm -rf /', 'nice'],
    ['nice -5 rm -rf /', 'nice'],
    ['nice --adjustment 5 rm -rf /', 'nice'],
    ['nice --adjustment=5 rm -rf /', 'nice'],
    ['nohup rm -rf /', 'nohup'],
    ['time -p rm -rf /', 'time'],
    ['time -f %e -o out rm -rf /', 'time'],
    ['time --format %e --output out rm -rf /', 'time'],
    ['timeout 5 rm -rf /', 'timeout'],
    ['timeout -s KILL -k 1 5 rm -rf /', 'timeout'],
    ['timeout --signal KILL --kill-after 1 5 rm -rf /', 'timeout'],
    ['timeout --foreground --preserve-status -v 5 rm -rf /', 'timeout'],
    ['stdbuf -i0 -oL -e 0 rm -rf /', 'stdbuf'],
    ['stdbuf --input 0 --output L --error=0 rm -rf /', 'stdbuf'],
    ['setsid -w rm -rf /', 'setsid'],
    ['ionice -c 2 -n 7 -p1 -t rm -rf /', 'ionice'],
    ['ionice --class 2 --classdata 7 --pid 1 rm -rf /', 'ionice'],
    ['chrt -f 1 rm -rf /', 'chrt'],
    ['taskset 0x1 rm -rf /', 'taskset'],
    ['flock /tmp/l rm -rf /', 'flock'],
    ['flock -n -w 3 -E 9 /tmp/l rm -rf /', 'flock'],
    ['flock --timeout 3 --conflict-exit-code 9 /tmp/l rm -rf /', 'flock'],
    ['unbuffer -p rm -rf /', 'unbuffer'],
    ['coproc rm -rf /', 'coproc'],
    ['caffeinate -i -t 5 -w 1 rm -rf /', 'caffeinate'],
    ['xargs rm -rf /', 'xargs'],
    ['xargs -0 -r -I {} -L 1 -n 2 -P 4 -s 99 -d x -E e -a f rm -rf /', 'xargs'],
    ['xargs --replace={} --max-lines=1 --max-args 2 --max-procs 4 rm -rf /', 'xargs'],
    ['xargs --max-chars 9 --delimiter x --eof=e --arg-file f --null rm -rf /', 'xargs'],
    ['parallel rm -rf / ::: a b', 'parallel'],
    ['parallel -j 2 -S h -I {} -d x -a f -P 3 rm -rf / :::: list', 'parallel'],
    ['parallel --jobs 2 --sshlogin h --delimiter x --arg-file f rm -rf / :::+ a', 'parallel'],
  ])('%s runs rm -rf / (via %s)', (line, via) => {
    expect(w(line)).toEqual([{ via, argv: RM }]);
  });

  it('keeps VAR=value words for sudo and env, and not for a wrapper without assignments', () => {
    expect(w('sudo A=1 B=2 rm -rf /')).toEqual([{ via: 'sudo', argv: ['A=1', 'B=2', ...RM] }]);
    expect(w('env -i A=1 rm -rf /')).toEqual([{ via: 'env', argv: ['A=1', ...RM] }]);
    expect(w('nice A=1 rm -rf /')).toEqual([{ via: 'nice', argv: ['A=1', ...RM] }]);
    // GNU env 9.1 sets any word with `=` (`env 1A=1 echo x` runs echo); only a shell's assignments lead the argv.
    expect(w('env 1A=1 rm')).toEqual([{ via: 'env', argv: ['rm'] }]);
    expect(w('sudo 1A=1 rm')).toEqual([{ via: 'sudo', argv: ['1A=1', 'rm'] }]);
  });

  it('stops reading options at the first operand, and a value that looks like an option is a value', () => {
    expect(w('sudo -u -rf rm')).toEqual([{ via: 'sudo', argv: ['rm'] }]);
    expect(w('timeout 5 -s KILL')).toEqual([{ via: 'timeout', argv: ['-s', 'KILL'] }]);
    expect(w('nice -n -5 rm -rf /')).toEqual([{ via: 'nice', argv: RM }]);
    expect(w('sudo - rm')).toEqual([{ via: 'sudo', argv: ['-', 'rm'] }]);
  });

  it('runs nothing when only options or operands are left', () => {
    for (const line of [
      'sudo',
      'sudo -u root',
      'env -i',
      'nice -n 5',
      'timeout 5',
      'flock /tmp/l',
      'sudo --',
      'nohup',
    ]) {
      expect(w(line), line).toEqual([]);
    }
    expect(w('sudo -u')).toEqual([]);
    expect(w('sudo --user')).toEqual([]);
  });

  it('skips the value of every long option that takes one (mutation survivors: each name in the tables)', () => {
    expect(w('runuser -u root --group g rm -rf /')).toEqual([{ via: 'runuser', argv: RM }]);
    expect(w('runuser --user root rm -rf /')).toEqual([{ via: 'runuser', argv: RM }]);
    expect(w('runuser -u root --supp-group g rm -rf /')).toEqual([{ via: 'runuser', argv: RM }]);
    expect(w('runuser -u root --shell /bin/sh rm -rf /')).toEqual([{ via: 'runuser', argv: RM }]);
    expect(w('runuser -u root --whitelist-environment A rm -rf /')).toEqual([{ via: 'runuser', argv: RM }]);
    expect(w('stdbuf --error 0 rm -rf /')).toEqual([{ via: 'stdbuf', argv: RM }]);
  });

  it("reads su's options with a value as taking the next word, even one that looks like -c", () => {
    // `su -g -c root`: the group is named -c, the user is root, and no command is given (GNU getopt).
    for (const opt of ['-g', '-G', '-w', '--group', '--supp-group', '--whitelist-environment']) {
      expect(w(`su ${opt} -c root`), opt).toEqual([]);
    }
    // -s names the program su runs as the user's shell: here one named -c.
    for (const opt of ['-s', '--shell']) expect(w(`su ${opt} -c root`), opt).toEqual([{ via: 'su -s', argv: ['-c'] }]);
    expect(w('su -s /usr/bin/rm root -- x')).toEqual([{ via: 'su -s', argv: ['/usr/bin/rm', 'x'] }]);
    expect(w('runuser --shell=/bin/rm root x')).toEqual([{ via: 'runuser -s', argv: ['/bin/rm', 'x'] }]);
  });

  it('after -- reads a word that looks like an option as the command (env -- -u x: the command is -u)', () => {
    expect(w('env -- -u x rm')).toEqual([{ via: 'env', argv: ['-u', 'x', 'rm'] }]);
    expect(w('nice -- -5 rm')).toEqual([{ via: 'nice', argv: ['-5', 'rm'] }]);
  });

  it('runs nothing when only VAR=value words follow sudo or env (env A=1 prints the environment)', () => {
    expect(w('sudo A=1')).toEqual([]);
    expect(w('env A=1 B=2')).toEqual([]);
  });

  it('reads xargs without a command as echo, as xargs does', () => {
    expect(w('xargs')).toEqual([{ via: 'xargs', argv: ['echo'] }]);
    expect(w('xargs -0 -n 1')).toEqual([{ via: 'xargs', argv: ['echo'] }]);
  });

  it('ends a parallel command at its first argument separator', () => {
    expect(w('parallel gzip ::: a b')).toEqual([{ via: 'parallel', argv: ['gzip'] }]);
    expect(w('parallel ::: a b')).toEqual([]);
  });

  it('is not a wrapper for other commands, nor for an empty argv', () => {
    expect(unwrapCommand([])).toEqual([]);
    expect(w('git status')).toEqual([]);
    expect(w('rm -rf /')).toEqual([]);
    expect(w('sudoedit /etc/passwd')).toEqual([]);
  });
});

describe('unwrapCommand: the script a wrapper runs', () => {
  it.each([
    ['su -c rm', [{ via: 'su -c', script: 'rm' }]],
    ['su -crm', [{ via: 'su -c', script: 'rm' }]],
    ['su -lc rm', [{ via: 'su -c', script: 'rm' }]],
    ['su -s /bin/sh -c rm root', [{ via: 'su -c', script: 'rm' }]],
    ['su --command rm', [{ via: 'su --command', script: 'rm' }]],
    ['su --command=rm', [{ via: 'su --command', script: 'rm' }]],
    ['su --shell /bin/sh --group g --command=rm', [{ via: 'su --command', script: 'rm' }]],
    ['su root -c rm', [{ via: 'su -c', script: 'rm' }]],
    ['su - root -c rm', [{ via: 'su -c', script: 'rm' }]],
    ['su - root -- -c rm', [{ via: 'su -c', script: 'rm' }]],
    ['su root --command rm', [{ via: 'su --command', script: 'rm' }]],
    ['su root --command=rm', [{ via: 'su --command', script: 'rm' }]],
    ['su root -s /bin/sh -c rm', [{ via: 'su -c', script: 'rm' }]],
    ['su root --shell /bin/sh -c rm', [{ via: 'su -c', script: 'rm' }]],
    ['su root -w A -c rm', [{ via: 'su -c', script: 'rm' }]],
    ['su root -lmc rm', [{ via: 'su -c', script: 'rm' }]],
    ['su root -crm', [{ via: 'su -c', script: 'rm' }]],
    ['runuser -l root -c rm', [{ via: 'runuser -c', script: 'rm' }]],
    ['runuser root -c rm', [{ via: 'runuser -c', script: 'rm' }]],
    ['runuser root --command=rm', [{ via: 'runuser --command', script: 'rm' }]],
    ['env -S rm', [{ via: 'env -S', script: 'rm' }]],
    ['env -vS rm', [{ via: 'env -S', script: 'rm' }]],
    ['env -Srm', [{ via: 'env -S', script: 'rm' }]],
    ['env --split-string rm', [{ via: 'env --split-string', script: 'rm' }]],
    ['env --split-string=rm', [{ via: 'env --split-string', script: 'rm' }]],
    ['flock -c rm /tmp/l', [{ via: 'flock -c', script: 'rm' }]],
    ['flock /tmp/l -c rm', [{ via: 'flock -c', script: 'rm' }]],
    ['flock -n /tmp/l --command rm', [{ via: 'flock --command', script: 'rm' }]],
    ['flock --command=rm /tmp/l', [{ via: 'flock --command', script: 'rm' }]],
    ['watch rm -rf /', [{ via: 'watch', script: 'rm -rf /' }]],
    ['watch -n 1 rm -rf /', [{ via: 'watch', script: 'rm -rf /' }]],
    ['watch --interval 1 rm -rf /', [{ via: 'watch', script: 'rm -rf /' }]],
    // -d/--differences take a value only attached (`-dpermanent`, `--differences=permanent`): procps-ng 4.0.2
    // `watch -d touch f` runs touch; -q/--equexit take the next word.
    ['watch -d rm -rf /', [{ via: 'watch', script: 'rm -rf /' }]],
    ['watch --differences rm -rf /', [{ via: 'watch', script: 'rm -rf /' }]],
    ['watch -q 3 --equexit 3 rm -rf /', [{ via: 'watch', script: 'rm -rf /' }]],
    ['ksh -c rm', [{ via: 'ksh -c', script: 'rm' }]],
    ['ash -c rm', [{ via: 'ash -c', script: 'rm' }]],
    ['mksh -c rm', [{ via: 'mksh -c', script: 'rm' }]],
    ['fish -c rm', [{ via: 'fish -c', script: 'rm' }]],
    ['rbash -c rm', [{ via: 'rbash -c', script: 'rm' }]],
    ['ssh host rm -rf /', [{ via: 'ssh', script: 'rm -rf /' }]],
    ['ssh -p 22 -i key -o X=1 -l me host rm -rf /', [{ via: 'ssh', script: 'rm -rf /' }]],
    ['eval rm -rf /', [{ via: 'eval', script: 'rm -rf /' }]],
    ['bash -c rm', [{ via: 'bash -c', script: 'rm' }]],
    ['sh -xc rm', [{ via: 'sh -c', script: 'rm' }]],
    ['bash -x -c rm', [{ via: 'bash -c', script: 'rm' }]],
    ['bash +x -c rm', [{ via: 'bash -c', script: 'rm' }]],
    ['bash -o posix -c rm', [{ via: 'bash -c', script: 'rm' }]],
    ['bash -O extglob -c rm', [{ via: 'bash -c', script: 'rm' }]],
    ['bash --norc --rcfile r --init-file i -c rm', [{ via: 'bash -c', script: 'rm' }]],
    ['bash -c -- rm', [{ via: 'bash -c', script: 'rm' }]],
    ['bash -c - rm', [{ via: 'bash -c', script: 'rm' }]],
    ['zsh -c rm', [{ via: 'zsh -c', script: 'rm' }]],
    ['dash -c rm', [{ via: 'dash -c', script: 'rm' }]],
    ['busybox rm -rf /', [{ via: 'busybox', argv: RM }]],
    ['find . -exec rm -rf {} ;', [{ via: 'find -exec', argv: ['rm', '-rf', '{}'] }]],
    ['find . -execdir rm {} +', [{ via: 'find -execdir', argv: ['rm', '{}'] }]],
    [
      'find . -ok rm {} ; -okdir sh {} ;',
      [
        { via: 'find -ok', argv: ['rm', '{}'] },
        { via: 'find -okdir', argv: ['sh', '{}'] },
      ],
    ],
    ['find . -exec rm {}', [{ via: 'find -exec', argv: ['rm', '{}'] }]],
    ['find . -name x -delete', [{ via: 'find -delete', argv: ['rm', '-f', '{}'] }]],
  ])('%s', (line, expected) => {
    expect(w(line)).toEqual(expected);
  });

  it('runs no script where none is given', () => {
    for (const line of [
      'su',
      'su root',
      'su - root',
      'su -l root',
      'su -c',
      'su root -c',
      'su --command',
      'eval',
      'bash',
      'bash -x',
      'bash script.sh',
      'bash -c',
      'busybox',
      'find . -exec ;',
      'find . -name x',
      'watch',
      'ssh host',
      'env -S',
      'flock /tmp/l -c',
    ]) {
      expect(w(line), line).toEqual([]);
    }
  });

  it('reads runuser -u as an argv, never as a script, even with -c among the command words', () => {
    expect(w('runuser -u root -- grep -c x f')).toEqual([{ via: 'runuser', argv: ['grep', '-c', 'x', 'f'] }]);
    expect(w('runuser -lu root -- rm')).toEqual([{ via: 'runuser', argv: ['rm'] }]);
  });

  it('names every wrapper it understands', () => {
    for (const name of [
      'sudo',
      'env',
      'xargs',
      'su',
      'flock',
      'bash',
      'sh',
      'busybox',
      'eval',
      'find',
      'watch',
      'ssh',
    ]) {
      expect(WRAPPERS).toContain(name);
    }
  });
});

describe('readsScriptFromStdin', () => {
  it.each([
    [['bash'], true],
    [['sh', '-s'], true],
    [['bash', '-x'], true],
    [['bash', '-o', 'posix'], true],
    [['bash', '-O', 'extglob', '-s', 'a'], true],
    [['bash', '-x', '-s', 'a'], true],
    [['bash', '-c', 'x'], false],
    [['bash', '-xc', 'x'], false],
    [['bash', 'script.sh'], false],
    [['bash', '-x', 'script.sh'], false],
    [['bash', '-o', 'script.sh'], true],
    [['busybox'], false],
    [['python3'], false],
    [[], false],
    // A script file naming a descriptor reads the here-doc, here-string or pipe the line spells out.
    [['bash', '/dev/stdin'], true],
    [['sh', '-x', '/dev/fd/0'], true],
    [['bash', '--', '//dev/./stdin'], true],
    [['sh', '/proc/self/fd/3'], true],
    [['sh', 'stdin'], true],
    [['sh', '/dev/fd/x'], false],
    [['bash', '--', 'script.sh'], false],
    [['source', '/dev/stdin'], true],
    [['.', '/proc/thread-self/fd/0'], true],
    [['.', 'lib.sh'], false],
    [['source'], false],
  ])('%j reads its script from stdin: %s', (argv, expected) => {
    expect(readsScriptFromStdin(argv)).toBe(expected);
  });
});

describe('the gate sees through the hostile wrapper shapes', () => {
  const policy = merged(BYPASS_POLICY);
  it.each([
    'su root -c "rm -rf /"',
    'su - root -c "rm -rf /"',
    'su - root -- -c "rm -rf /"',
    'su root --command="rm -rf /"',
    'runuser root -c "rm -rf /"',
    'flock /tmp/l -c "rm -rf /"',
    'flock -n /tmp/l --command "rm -rf /"',
    'sudo -R / rm -rf /',
    'sudo --chroot / rm -rf /',
    'env -P /bin rm -rf /',
    'watch -d rm -rf /',
  ])('denies %s', async (command) => {
    expect((await decideTerminal(policy, command)).outcome).toBe('deny');
  });
});
