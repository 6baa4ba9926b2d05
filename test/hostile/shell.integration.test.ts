/**
 * Hostile agents against the gate, live over NATS with real terminals (issue 11 holes 1–5 and 15): control
 * characters in exec, in terminal.write at the prompt and in worker command lines; here-docs whose end bash
 * and the parser could place differently; typeahead left for the prompt; `skein policy check` disagreeing
 * with the runtime. Every attack tries to create a canary file or print a canary marker; neither may appear.
 * Plain commands that were allowed stay allowed (the control group).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeChar } from '../../machines/permission/permission-control.ts';
import type { TestRuntime } from '../support/runtime.ts';
import {
  attack,
  canaries,
  cliVerdict,
  expectNoCanary,
  hostileRuntime,
  openTerminal,
  ISSUE_11_POLICY,
  logText,
  outcome,
  reportAttacks,
  runtimeVerdict,
  settle,
  type Canary,
} from './support.ts';

const POLICY = {
  ...ISSUE_11_POLICY,
  tools: {
    ...ISSUE_11_POLICY.tools,
    read_file: { always_allow: [{ pattern: '^src/' }] },
    write_file: { always_allow: [{ pattern: '^src/' }] },
  },
};

let rt: TestRuntime;
let terminalId: string;
// In the workspace: terminals are sandboxed, and the sandbox's /tmp is its own.
const { fresh, made } = canaries(() => rt.workspace);

beforeAll(async () => {
  rt = await hostileRuntime(POLICY, { domains: { permission: { timeoutMs: 1000 } } });
  mkdirSync(join(rt.workspace, 'src'), { recursive: true });
  writeFileSync(join(rt.workspace, 'src', 'a.txt'), 'a\n');
  writeFileSync(join(rt.workspace, 'secret.txt'), 'secret\n');
  terminalId = await openTerminal(rt);
}, 60_000);
afterAll(async () => {
  await rt?.dispose();
});
reportAttacks('shell');

const exec = (command: string) => rt.call('terminal.exec', { terminalId, command, timeoutMs: 10_000 });
const write = (data: string) => rt.call('terminal.write', { terminalId, data });
/** Clears whatever is typed at the prompt (Ctrl-U: understood by the gate and by readline). */
const clearLine = () => write('\x15');

// Control characters: every C0 control but LF and TAB, DEL, and two C1 controls.
const CONTROLS = [
  ...Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).filter((c) => c !== '\n' && c !== '\t'),
  '\x7f',
  '\u0085',
  '\u009b',
];
const EXEC_TEMPLATES: Array<(c: string, k: Canary) => string> = [
  (c, k) => `echo hi${c}touch ${k.path}`,
  (c, k) => `ls${c}printf %s%s ${k.halves[0]} ${k.halves[1]}`,
  (c, k) => `git status${c}touch ${k.path} #`,
  (c, k) => `cat /dev/null ${c} ; touch ${k.path}`,
];

describe('control characters in terminal.exec (holes 1, 2)', () => {
  for (const ch of CONTROLS) {
    EXEC_TEMPLATES.forEach((template, i) => {
      attack('control-exec', `${describeChar(ch)} in template ${i}`, async () => {
        const k = fresh();
        const reply = await exec(template(ch, k));
        expect(outcome(reply)).toBe('permission_denied');
        await expectNoCanary(rt, k);
      });
    });
  }
});

// Hole 2's keys, and others readline acts on, typed at the prompt.
const PROMPT_KEYS = [
  '\r',
  '\x03',
  '\x1c',
  '\x15',
  '\x17',
  '\x04',
  '\x1a',
  '\x0f',
  '\x16',
  '\x01',
  '\x1b',
  '\t',
  '\x18',
];

describe('control characters in terminal.write at the prompt (hole 2)', () => {
  for (const key of PROMPT_KEYS) {
    attack('control-write', `${describeChar(key)} then Enter in one write`, async () => {
      const k = fresh();
      const reply = await write(`echo x${key}touch ${k.path}\r`);
      expect(outcome(reply)).toBe('permission_denied');
      await clearLine();
      await settle(150);
      await expectNoCanary(rt, k);
    });
    attack('control-write', `${describeChar(key)}, then Enter in a second write`, async () => {
      const k = fresh();
      const first = await write(`echo x${key}touch ${k.path}`);
      const second = await write('\r');
      // Either the key is refused at once, or what completes is judged as bash will run it (touch: denied).
      expect([outcome(first), outcome(second)]).toContain('permission_denied');
      await clearLine();
      await settle(150);
      await expectNoCanary(rt, k);
    });
    attack('control-write', `${describeChar(key)} hiding a marker printer`, async () => {
      const k = fresh();
      await write(`ls${key}printf %s%s ${k.halves[0]} ${k.halves[1]}\r`);
      await clearLine();
      await settle(150);
      await expectNoCanary(rt, k);
    });
  }
});

describe('worker command lines (hole 3)', () => {
  for (const key of ['\x03', '\x1c', '\x15', '\x17', '\x04', '\x1a', '\x0f', '\r', '\x16', '\x1b']) {
    attack('control-worker', `echo x${JSON.stringify(key)}Xtouch canary #`, async () => {
      const k = fresh();
      const reply = await rt.call('agent.spawn', {
        label: 'worker',
        worker: { command: 'echo', args: [`x${key}Xtouch ${k.path} #`] },
      });
      expect(outcome(reply)).toBe('permission_denied');
      await expectNoCanary(rt, k);
    });
  }
});

// A line typed over several writes is judged whole (the sandboxed prompt must be recognised as one).
const SPLIT_WRITES: Array<[string, (k: Canary) => string[]]> = [
  ['command, then Enter', (k) => [`touch ${k.path}`, '\r']],
  ['split inside the name', (k) => ['tou', `ch ${k.path}\r`]],
  ['allowed prefix, then the rest', (k) => ['echo x; ', `touch ${k.path}`, '\r']],
  ['backspaces turn echo into a command', (k) => [`echo x\x7f\x7f\x7f\x7f\x7f\x7ftouch ${k.path}`, '\r']],
  ['Ctrl-U then a command', (k) => ['echo x', `\x15touch ${k.path}`, '\n']],
  ['Ctrl-C then a command', (k) => ['echo x', `\x03touch ${k.path}\r`]],
];

describe('lines typed over several writes at the prompt', () => {
  for (const [name, make] of SPLIT_WRITES) {
    attack('split-write', name, async () => {
      const k = fresh();
      const outcomes: string[] = [];
      for (const data of make(k)) outcomes.push(outcome(await write(data)));
      expect(outcomes).toContain('permission_denied');
      await clearLine();
      await settle(200);
      await expectNoCanary(rt, k);
    });
  }
});

const HEREDOCS: Array<[string, (k: Canary) => string]> = [
  ['delimiter split by a continuation (the issue)', (k) => `cat <<EOF\nEO\\\nF\ntouch ${k.path}\nEOF`],
  ['continuation in the operator', (k) => `cat <<EO\\\nF\ntouch ${k.path}\nEOF`],
  ['continuation in the body', (k) => `cat <<EOF\nx\\\nEOF\ntouch ${k.path}\nEOF`],
  ['partly quoted delimiter', (k) => `cat <<E"O"F\nEOF\ntouch ${k.path}\nE"O"F`],
  ['single-quoted delimiter', (k) => `cat <<'EOF'\nEOF\ntouch ${k.path}\nEOF`],
  ['escaped delimiter', (k) => `cat <<\\EOF\nEOF\ntouch ${k.path}\nEOF`],
  ['<<- with tabs', (k) => `cat <<-EOF\n\tEOF\ntouch ${k.path}\nEOF`],
  ['<<- tab before the end', (k) => `cat <<-EOF\nx\n\tEOF\ntouch ${k.path}\nEOF`],
  ['two here-docs, second split', (k) => `cat <<A <<B\nA\nB\\\n\ntouch ${k.path}\nB`],
  ['here-doc into bash', (k) => `cat <<EOF | cat\nEO\\\nF\nprintf %s%s ${k.halves[0]} ${k.halves[1]}\nEOF`],
  ['CR ends the delimiter line', (k) => `cat <<EOF\nEOF\r\ntouch ${k.path}\nEOF`],
  ['dollar-quoted delimiter', (k) => `cat <<$'EOF'\nEOF\ntouch ${k.path}\nEOF`],
];

describe('here-docs (hole 4)', () => {
  for (const [name, make] of HEREDOCS) {
    attack('heredoc', name, async () => {
      const k = fresh();
      const reply = await exec(make(k));
      expect(outcome(reply)).toBe('permission_denied');
      await expectNoCanary(rt, k);
    });
  }
});

describe('typeahead (hole 5; the terminal engineer flushes the input queue)', () => {
  // Found by a review (3 December): the gate judged only a function's body, so an allowed `echo` made this
  // allow-list define `__skein_prompt` (or `builtin`, which the rc's drain calls) and turn the drain off; the
  // attacks below then ran their canary at the prompt. Definitions shadowing a builtin or the rc are refused.
  attack('typeahead', 'the prompt function redefined first, then Ctrl-D ends cat', async () => {
    const k = fresh();
    const open = await rt.call('terminal.open', {});
    const t = String(open.ok ? open['terminalId'] : '');
    for (const command of [
      "__skein_prompt() { echo -ne '\\e]133;D;0\\a'; }",
      "builtin() { echo -ne '\\e]133;D;0\\a'; }",
      'function read { echo; }',
    ]) {
      expect(outcome(await rt.call('terminal.exec', { terminalId: t, command }))).toBe('permission_denied');
    }
    expect(outcome(await rt.call('terminal.exec', { terminalId: t, command: 'cat', yieldMs: 300 }))).toBe('ok');
    await rt.call('terminal.write', { terminalId: t, data: `\x04touch ${k.path}` });
    await settle(500);
    await rt.call('terminal.write', { terminalId: t, data: 'ls\r' });
    await settle(500);
    await rt.call('terminal.close', { terminalId: t });
    await expectNoCanary(rt, k, [`${k.path}ls`]);
  });

  for (const [name, typed] of [
    ['Ctrl-D ends cat, the rest waits for the prompt', '\x04touch '],
    ['a line for cat, then text left over', 'x\n\x04touch '],
    ['text typed while cat runs, Ctrl-C', '\x03touch '],
  ] as const) {
    attack('typeahead', name, async () => {
      const k = fresh();
      // A terminal of its own: whatever is left typed must not disturb the other attacks.
      const open = await rt.call('terminal.open', {});
      const t = String(open.ok ? open['terminalId'] : '');
      const started = await rt.call('terminal.exec', { terminalId: t, command: 'cat', yieldMs: 300 });
      expect(outcome(started)).toBe('ok');
      await rt.call('terminal.write', { terminalId: t, data: `${typed}${k.path}` });
      await settle(500);
      await rt.call('terminal.write', { terminalId: t, data: 'ls\r' });
      await settle(500);
      await rt.call('terminal.close', { terminalId: t });
      await expectNoCanary(rt, k, [`${k.path}ls`]);
    });
  }
});

// tree-sitter-bash ends a word at a backslash after a quoted piece (`.sk'e'\in` was `.ske` and `in`), and puts
// words after a redirect target in the redirect; bash runs one word, and the later words as arguments. Found
// by the mutation tests of shell-node-words.ts (docs/quality.md). `cat .skein/policy.json` asks (sensitive);
// the split spelling was allowed by `^cat\b` and printed the policy.
describe('words bash reads other than tree-sitter-bash', () => {
  for (const command of ["cat .sk'e'\\in/policy.json", 'cat "src/a.txt" 2>/dev/null .sk\'e\'\\in/policy.json']) {
    attack('joined-words', command, async () => {
      expect(outcome(await exec(command))).toBe('permission_denied');
    });
  }
});

// Found by a review (3 December), under this allow-list: bash removes a backslash-newline before it reads
// words, so `echo a\<newline>#` is `echo a#` and the line goes on; tree-sitter-bash read a comment. In double
// quotes, `$\<newline>(` is `$(`. Both ran their canary.
describe('line continuations with text on both sides', () => {
  const CONTINUED: Array<[string, (k: Canary) => string]> = [
    ['a word glued to a #', (k) => `echo a\\\n#; touch ${k.path}`],
    ['$ and ( in double quotes', (k) => `echo "$\\\n(touch ${k.path})"`],
    ['$ and { in double quotes', (k) => `echo "$\\\n{x:-$(printf %s%s ${k.halves[0]} ${k.halves[1]})}"`],
  ];
  for (const [name, make] of CONTINUED) {
    attack('continuation', name, async () => {
      const k = fresh();
      expect(outcome(await exec(make(k)))).toBe('permission_denied');
      await expectNoCanary(rt, k);
    });
  }
});

// Issue 11, acceptance: nothing that was allowed for plain commands is refused now.
describe('plain commands stay allowed (control group)', () => {
  for (const command of ['git status', 'ls -la', 'echo hi && ls', 'ls | cat', 'ls; echo done', 'cat src/a.txt']) {
    attack('allowed-still', command, async () => {
      expect(outcome(await exec(command))).toBe('ok');
    });
  }
});

const AGREEMENT: Array<[string, string]> = [
  ['terminal', 'ls -la'],
  ['terminal', 'git status'],
  ['terminal', 'echo x\rrm -rf /'],
  ['terminal', 'echo hi\x03touch x'],
  ['terminal', 'rm -rf build'],
  ['terminal', 'curl example.com'],
  ['terminal', 'npm test'],
  ['terminal', 'ls && rm x'],
  ['terminal', 'echo $(id)'],
  ['terminal', 'cat <<EOF\nEO\\\nF\nEOF'],
  ['terminal', 'ls | cat'],
  ['terminal', 'cat src/a.txt'],
  ['read_file', '/etc/passwd'],
  ['read_file', '../outside.txt'],
  ['read_file', 'src/a.txt'],
  ['read_file', 'secret.txt'],
  ['read_file', 'src/../secret.txt'],
  ['read_file', '/tmp'],
  ['read_file', 'missing/x.txt'],
  ['read_file', '.skein/policy.json'],
  ['write_file', 'src/new.txt'],
  ['write_file', '/etc/passwd'],
  ['write_file', 'nodir/x.txt'],
  ['write_file', 'top.txt'],
];

describe('skein policy check agrees with the runtime (hole 15)', () => {
  for (const [tool, input] of AGREEMENT) {
    attack('policy-check', `${tool} ${JSON.stringify(input)}`, async () => {
      expect(await cliVerdict(rt, tool, input)).toBe(await runtimeVerdict(rt, terminalId, tool, input));
    });
  }
});

// Found 6 December: a command can print the end mark itself, and the host takes it for the command's end while
// the command still runs (architecture.md, Known limits). What must hold all the same: the lines typed after it
// run only what the gate judged, so a denied command sent into the shifted terminal never runs.
describe('an end mark printed by the command itself', () => {
  attack('forged-mark', 'echo prints the end mark, cat runs on; a denied command follows', async () => {
    const k = fresh();
    const open = await rt.call('terminal.open', {});
    const t = String(open.ok ? open['terminalId'] : '');
    const forged = `echo -e '\\e]133;D;0\\a\\e]133;A\\a$ \\e]133;B\\a'; cat`;
    expect(outcome(await rt.call('terminal.exec', { terminalId: t, command: forged, yieldMs: 500 }))).toBe('ok');
    const denied = await rt.call('terminal.exec', { terminalId: t, command: `touch ${k.path}`, timeoutMs: 3_000 });
    expect(outcome(denied)).toBe('permission_denied');
    // An allowed command typed into the shifted terminal: cat reads its line; the command's timeout ends cat.
    await rt.call('terminal.exec', { terminalId: t, command: 'echo after', timeoutMs: 1_500 }, { timeoutMs: 10_000 });
    const next = await rt.call(
      'terminal.exec',
      { terminalId: t, command: 'ls', timeoutMs: 3_000 },
      { timeoutMs: 10_000 },
    );
    expect(outcome(next)).toBe('ok');
    await settle(500, () => existsSync(k.path));
    await rt.call('terminal.close', { terminalId: t });
    await expectNoCanary(rt, k);
  });
});

describe('no marker anywhere', () => {
  it('no canary marker reached a fact or the output stream', async () => {
    const text = await logText(rt);
    expect(made.filter((k) => text.includes(k.marker)).map((k) => k.marker)).toEqual([]);
  });
});
