/**
 * The whole split of each shell construct the gate reads (commands, forms, argv, via, unsafe, parseError),
 * beside shell-parse.test.ts: assignments, redirects, pipelines and the scripts they feed a shell, here-strings
 * and here-docs (aliases, tests, globbed names, escapes and `$"…"` are in shell-split-names.test.ts). Each
 * expected split was checked against what bash 5.2 runs for the input.
 */
import type { ShellSplit } from '../../../machines/permission/shell-words.ts';
import { shellSplitter } from '../../support/permission-fixtures.ts';

const split = async (src: string) => (await shellSplitter())(src);

const WHOLE: [string, ShellSplit][] = [
  [
    'A=1 /opt/x/rm a',
    {
      commands: [
        { kind: 'command', text: 'A=1 rm a', forms: ['A=1 rm a', 'rm a', 'A=1 /opt/x/rm a'], argv: ['rm', 'a'] },
      ],
      unsafe: [],
    },
  ],
  [
    'A=1 B=2',
    {
      commands: [
        { kind: 'command', text: 'A=1', forms: ['A=1'], argv: ['A=1'] },
        { kind: 'command', text: 'B=2', forms: ['B=2'], argv: ['B=2'] },
      ],
      unsafe: [],
    },
  ],
  [
    'A=1 B=2 ls',
    { commands: [{ kind: 'command', text: 'A=1 B=2 ls', forms: ['A=1 B=2 ls', 'ls'], argv: ['ls'] }], unsafe: [] },
  ],
  [
    'ls >&2 2>&1 <&0 >&- 1>&3- >& file',
    {
      commands: [
        { kind: 'command', text: 'ls', forms: ['ls'], argv: ['ls'] },
        { kind: 'redirect', text: '>& file', forms: ['>& file'], argv: [] },
      ],
      unsafe: [],
    },
  ],
  [
    'ls > out 2>> err &> both >| force < in',
    {
      commands: [
        { kind: 'command', text: 'ls', forms: ['ls'], argv: ['ls'] },
        { kind: 'redirect', text: '> out', forms: ['> out'], argv: [] },
        { kind: 'redirect', text: '>> err', forms: ['>> err'], argv: [] },
        { kind: 'redirect', text: '&> both', forms: ['&> both'], argv: [] },
        { kind: 'redirect', text: '>| force', forms: ['>| force'], argv: [] },
        { kind: 'redirect', text: '< in', forms: ['< in'], argv: [] },
      ],
      unsafe: [],
    },
  ],
  [
    'ls > /dev/null 2>/dev/null &>/dev/null',
    { commands: [{ kind: 'command', text: 'ls', forms: ['ls'], argv: ['ls'] }], unsafe: [] },
  ],
  [
    'a | b | c',
    {
      commands: [
        { kind: 'command', text: 'a', forms: ['a'], argv: ['a'] },
        { kind: 'command', text: 'b', forms: ['b'], argv: ['b'] },
        { kind: 'command', text: 'c', forms: ['c'], argv: ['c'] },
        { kind: 'pipeline', text: 'a | b | c', forms: ['a | b | c'], argv: [] },
      ],
      unsafe: [],
    },
  ],
  [
    'sudo a | b',
    {
      commands: [
        { kind: 'command', text: 'sudo a', forms: ['sudo a'], argv: ['sudo', 'a'] },
        { kind: 'command', text: 'a', forms: ['a'], argv: ['a'], via: 'sudo' },
        { kind: 'command', text: 'b', forms: ['b'], argv: ['b'] },
        { kind: 'pipeline', text: 'sudo a | b', forms: ['sudo a | b', 'a | b'], argv: [] },
      ],
      unsafe: [],
    },
  ],
  [
    'sudo -u x cat f | env A=1 bash',
    {
      commands: [
        { kind: 'command', text: 'sudo -u x cat f', forms: ['sudo -u x cat f'], argv: ['sudo', '-u', 'x', 'cat', 'f'] },
        { kind: 'command', text: 'cat f', forms: ['cat f'], argv: ['cat', 'f'], via: 'sudo' },
        { kind: 'command', text: 'env A=1 bash', forms: ['env A=1 bash'], argv: ['env', 'A=1', 'bash'] },
        { kind: 'command', text: 'A=1 bash', forms: ['A=1 bash', 'bash'], argv: ['bash'], via: 'env' },
        {
          kind: 'pipeline',
          text: 'sudo -u x cat f | env A=1 bash',
          forms: ['sudo -u x cat f | env A=1 bash', 'cat f | bash'],
          argv: [],
        },
        // A shell reading what a program writes (not a literal the line spells out): a person decides, and the
        // program's words are judged as the script they may be.
        { kind: 'command', text: 'f', forms: ['f'], argv: ['f'], via: 'pipe | env' },
      ],
      unsafe: ['sudo -u x cat f'],
    },
  ],
  [
    'nice -n 1 sudo grep x | sh',
    {
      commands: [
        {
          kind: 'command',
          text: 'nice -n 1 sudo grep x',
          forms: ['nice -n 1 sudo grep x'],
          argv: ['nice', '-n', '1', 'sudo', 'grep', 'x'],
        },
        { kind: 'command', text: 'sudo grep x', forms: ['sudo grep x'], argv: ['sudo', 'grep', 'x'], via: 'nice' },
        { kind: 'command', text: 'grep x', forms: ['grep x'], argv: ['grep', 'x'], via: 'nice > sudo' },
        { kind: 'command', text: 'sh', forms: ['sh'], argv: ['sh'] },
        {
          kind: 'pipeline',
          text: 'nice -n 1 sudo grep x | sh',
          forms: ['nice -n 1 sudo grep x | sh', 'grep x | sh'],
          argv: [],
        },
        { kind: 'command', text: 'x', forms: ['x'], argv: ['x'], via: 'pipe | sh' },
      ],
      unsafe: ['nice -n 1 sudo grep x'],
    },
  ],
  [
    "echo 'rm -rf /' | sh",
    {
      commands: [
        { kind: 'command', text: 'echo rm -rf /', forms: ['echo rm -rf /'], argv: ['echo', 'rm -rf /'] },
        { kind: 'command', text: 'sh', forms: ['sh'], argv: ['sh'] },
        { kind: 'pipeline', text: 'echo rm -rf / | sh', forms: ['echo rm -rf / | sh'], argv: [] },
        { kind: 'command', text: 'rm -rf /', forms: ['rm -rf /'], argv: ['rm', '-rf', '/'], via: 'echo | sh' },
      ],
      unsafe: [],
    },
  ],
  [
    "printf 'rm -rf x\\nls' | bash",
    {
      commands: [
        {
          kind: 'command',
          text: 'printf rm -rf x\\nls',
          forms: ['printf rm -rf x\\nls'],
          argv: ['printf', 'rm -rf x\\nls'],
        },
        { kind: 'command', text: 'bash', forms: ['bash'], argv: ['bash'] },
        { kind: 'pipeline', text: 'printf rm -rf x\\nls | bash', forms: ['printf rm -rf x\\nls | bash'], argv: [] },
        { kind: 'command', text: 'rm -rf x', forms: ['rm -rf x'], argv: ['rm', '-rf', 'x'], via: 'printf | bash' },
        { kind: 'command', text: 'ls', forms: ['ls'], argv: ['ls'], via: 'printf | bash' },
      ],
      unsafe: [],
    },
  ],
  [
    "echo -n 'touch f' | sh",
    {
      commands: [
        { kind: 'command', text: 'echo -n touch f', forms: ['echo -n touch f'], argv: ['echo', '-n', 'touch f'] },
        { kind: 'command', text: 'sh', forms: ['sh'], argv: ['sh'] },
        { kind: 'pipeline', text: 'echo -n touch f | sh', forms: ['echo -n touch f | sh'], argv: [] },
        { kind: 'command', text: 'touch f', forms: ['touch f'], argv: ['touch', 'f'], via: 'echo | sh' },
      ],
      unsafe: [],
    },
  ],
  [
    "echo -e 'touch f' | bash -s",
    {
      commands: [
        { kind: 'command', text: 'echo -e touch f', forms: ['echo -e touch f'], argv: ['echo', '-e', 'touch f'] },
        { kind: 'command', text: 'bash -s', forms: ['bash -s'], argv: ['bash', '-s'] },
        { kind: 'pipeline', text: 'echo -e touch f | bash -s', forms: ['echo -e touch f | bash -s'], argv: [] },
        { kind: 'command', text: 'touch f', forms: ['touch f'], argv: ['touch', 'f'], via: 'echo | bash' },
      ],
      unsafe: [],
    },
  ],
  [
    "echo -ne 'touch f' | sh",
    {
      commands: [
        { kind: 'command', text: 'echo -ne touch f', forms: ['echo -ne touch f'], argv: ['echo', '-ne', 'touch f'] },
        { kind: 'command', text: 'sh', forms: ['sh'], argv: ['sh'] },
        { kind: 'pipeline', text: 'echo -ne touch f | sh', forms: ['echo -ne touch f | sh'], argv: [] },
        { kind: 'command', text: 'touch f', forms: ['touch f'], argv: ['touch', 'f'], via: 'echo | sh' },
      ],
      unsafe: [],
    },
  ],
  [
    'echo x | cat',
    {
      commands: [
        { kind: 'command', text: 'echo x', forms: ['echo x'], argv: ['echo', 'x'] },
        { kind: 'command', text: 'cat', forms: ['cat'], argv: ['cat'] },
        { kind: 'pipeline', text: 'echo x | cat', forms: ['echo x | cat'], argv: [] },
      ],
      unsafe: [],
    },
  ],
  [
    "cat f | bash -c 'ls'",
    {
      commands: [
        { kind: 'command', text: 'cat f', forms: ['cat f'], argv: ['cat', 'f'] },
        { kind: 'command', text: 'bash -c ls', forms: ['bash -c ls'], argv: ['bash', '-c', 'ls'] },
        { kind: 'command', text: 'ls', forms: ['ls'], argv: ['ls'], via: 'bash -c' },
        { kind: 'pipeline', text: 'cat f | bash -c ls', forms: ['cat f | bash -c ls'], argv: [] },
      ],
      unsafe: [],
    },
  ],
  [
    'a > f | b',
    {
      commands: [
        { kind: 'command', text: 'a', forms: ['a'], argv: ['a'] },
        { kind: 'redirect', text: '> f', forms: ['> f'], argv: [] },
        { kind: 'command', text: 'b', forms: ['b'], argv: ['b'] },
        { kind: 'pipeline', text: 'a | b', forms: ['a | b'], argv: [] },
      ],
      unsafe: [],
    },
  ],
  [
    "bash <<< 'touch f'",
    {
      commands: [
        { kind: 'command', text: 'bash', forms: ['bash'], argv: ['bash'] },
        { kind: 'command', text: 'touch f', forms: ['touch f'], argv: ['touch', 'f'], via: 'bash <<' },
      ],
      unsafe: [],
    },
  ],
  [
    'sh <<EOF\ntouch f\nEOF',
    {
      commands: [
        { kind: 'command', text: 'sh', forms: ['sh'], argv: ['sh'] },
        { kind: 'command', text: 'touch f', forms: ['touch f'], argv: ['touch', 'f'], via: 'sh <<' },
      ],
      unsafe: [],
    },
  ],
  ["cat <<< 'touch f'", { commands: [{ kind: 'command', text: 'cat', forms: ['cat'], argv: ['cat'] }], unsafe: [] }],
  [
    'bash <<EOF > out\ntouch g\nEOF',
    {
      commands: [
        { kind: 'command', text: 'bash', forms: ['bash'], argv: ['bash'] },
        { kind: 'command', text: 'touch g', forms: ['touch g'], argv: ['touch', 'g'], via: 'bash <<' },
        { kind: 'redirect', text: '> out', forms: ['> out'], argv: [] },
      ],
      unsafe: [],
    },
  ],
];

describe('splitShell: whole splits', () => {
  it.each(WHOLE)('%j', async (src, expected) => {
    expect(await split(src)).toEqual(expected);
  });
});
