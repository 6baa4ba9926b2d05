/**
 * Issue 11's property: what the gate judges is what bash runs. Random command
 * lines (quoting of every kind, control characters in words and between them,
 * `;` `&&` `||` `|`, newlines, CR) go through the real decision (tree-sitter
 * split + `decide`) and, when allowed, through a real bash in a PTY, delivered
 * by TerminalManager.exec exactly as every exec is. That bash traces what it
 * executes: each command name the generator uses is a function that appends
 * its exact argv to a trace file, and `command_not_found_handle` records any
 * other name bash tried to run. An allowed input must never execute a command
 * the gate did not see: every traced command name is one of the gate's
 * sub-commands, and bash runs no more commands than the gate saw.
 *
 * Seed: fixed when CI is set, random otherwise; printed in the test name.
 * Replay a failure with `FC_SEED=<seed> npx vitest run test/actors/terminal/gate-view.property.test.ts`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { decide } from '../../../machines/permission/permission-policy.ts';
import { BYPASS_POLICY, merged, shellSplitter } from '../../support/permission-fixtures.ts';
import { terminalHarness } from '../../support/terminal-harness.ts';
import { propertySeed } from '../../support/seed.ts';

const seed = propertySeed();
const numRuns = Number(process.env.FC_RUNS ?? 300);
const A = 'a1';
const ALLOWED = ['echo', 'printf', 'true', 'ls'];
const policy = merged({
  default: 'deny',
  tools: { terminal: { default: 'deny', always_allow: ALLOWED.map((n) => ({ pattern: `^${n}(\\s|$)` })) } },
});

/** Bytes readline or the tty would act on if they were typed, plus the shell's own metacharacters. */
const CONTROL = [
  '\r',
  '\u0003',
  '\u0004',
  '\u000f',
  '\u0015',
  '\u0016',
  '\u0017',
  '\u001a',
  '\u001b',
  '\u001c',
  '\u007f',
];
const char = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...'abcxyz019 -_./=') },
  { weight: 2, arbitrary: fc.constantFrom(...CONTROL) },
  // Newlines inside words too: the parser once read `echo <NL>\\touch x` as one echo while bash ran `touch`
  // (found by this property; the gate now refuses an unquoted line break inside a word).
  { weight: 2, arbitrary: fc.constantFrom(';', '&', '|', '#', "'", '"', '\\', '\t', '\n', '*', '~', '{', '}', '(') },
  // No bare `$`: the parser reads `"$"` as an empty word where bash keeps `$` (reported to the gate's owner);
  // `$'…'` quoting is still generated below.
  { weight: 1, arbitrary: fc.constantFrom('`', '<', '>') },
);
const raw = fc.array(char, { maxLength: 10 }).map((cs) => cs.join(''));
/** One word: raw, or quoted in one of bash's ways (the content may break out of a quote: that is the point). */
const word = fc.oneof(
  raw,
  raw.map((s) => `'${s}'`),
  raw.map((s) => `"${s}"`),
  raw.map((s) => `$'${s}'`),
  raw.map((s) => [...s].map((c) => `\\${c}`).join('')),
);
const name = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...ALLOWED) },
  { weight: 1, arbitrary: fc.constant('touch') },
);
const simple = fc.tuple(name, fc.array(word, { maxLength: 4 })).map(([n, ws]) => [n, ...ws].join(' '));
const separator = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('; ', ' && ', ' || ', ' | ', '\n', ' ') },
  { weight: 1, arbitrary: fc.constantFrom(...CONTROL) },
);
const commandLine = fc
  .tuple(simple, fc.array(fc.tuple(separator, simple), { maxLength: 3 }))
  .map(([first, rest]) => first + rest.map(([s, c]) => s + c).join(''));

let h: ReturnType<typeof terminalHarness>;
let terminalId: string;
let trace: string;
beforeAll(async () => {
  h = terminalHarness({ closeGraceMs: 300 });
  trace = join(h.workspace, 'trace');
  ({ terminalId } = await h.open());
  // Every name the generator uses records its argv (fields \x1f-ended, then \x1e\x1f: one printf, so one
  // O_APPEND write even from the stages of a pipeline) instead of running; any other name bash tries to run
  // is recorded by command_not_found_handle. Line breaks in the fields are written as \x1d: bash's printf
  // flushes at each one, and a record cut there interleaved with another stage's (`ls | echo '\n'` once read
  // as a command named "\nls").
  const nl = "//$'\\n'/$'\\x1d'";
  const record = `builtin printf '%s\\x1f' "$FUNCNAME" "\${@${nl}}" $'\\x1e' >> ${trace}`;
  const setup = [
    ...[...ALLOWED, 'touch'].map((n) => `${n}() { ${record}; }`),
    `command_not_found_handle() { local n="?$1"; shift; ` +
      `builtin printf '%s\\x1f' "\${n${nl}}" "\${@${nl}}" $'\\x1e' >> ${trace}; return 127; }`,
  ].join('\n');
  const r = await h.manager.exec(A, { terminalId, command: setup });
  expect(r).toMatchObject({ status: 'exited', exitCode: 0 });
});
afterAll(async () => h?.dispose());

function traced(): string[][] {
  const text = readFileSync(trace, 'utf8');
  writeFileSync(trace, '');
  return text
    .split('\x1e\x1f')
    .filter((r) => r.length > 0)
    .map((r) => r.split('\x1f').slice(0, -1));
}

/**
 * Inputs holding control characters other than \n and \t, which issue 11 has the gate refuse (that lands with
 * the gate's own change; until then today's `decide` allows some, and they are checked as described below).
 */
const CONTROL_CHARACTER = /[\x00-\x08\x0b-\x1f\x7f]/;

describe('the gate judges what bash runs', () => {
  it(`never runs a command the gate did not see, for allowed random command lines (seed ${seed})`, async () => {
    const split = await shellSplitter();
    const runs = { allowed: 0, control: 0 };
    writeFileSync(trace, '');
    await fc.assert(
      fc.asyncProperty(commandLine, async (command) => {
        const s = split(command);
        const decision = decide({ tool: 'terminal', input: command, split: s }, policy);
        if (decision.outcome !== 'allow') return;
        const control = CONTROL_CHARACTER.test(command);
        runs[control ? 'control' : 'allowed']++;
        const r = await h.manager.exec(A, { terminalId, command, timeoutMs: 5_000 });
        expect(r.status).toBe('exited');
        // A `&` in the input leaves a background job: let it record before the trace is read.
        await h.manager.exec(A, { terminalId, command: 'wait' });
        const gate = s.commands.filter((c) => c.kind === 'command');
        const names = gate.map((c) => c.argv[0]);
        const ran = traced().filter((argv) => !(control && argv[0]?.startsWith('?')));
        // What bash executed (or tried to: `?name` is a name it looked up and found nowhere) is, command for
        // command, what the gate judged: the same names, and no more commands than the gate saw. With control
        // characters, which today's `decide` still allows (the gate's refusal closes that; its parser reads CR as
        // a blank), bash may look up a name the parser split (`echo\rtouch`) and find nothing: nothing runs.
        // Arguments are not compared: the parser normalises some words differently from bash (`\ ` dropped,
        // `''' \'\a` split in two), which changes no command name; reported to the gate's owner.
        for (const argv of ran) expect(names).toContain(argv[0]);
        expect(ran.length).toBeLessThanOrEqual(gate.length);
      }),
      { seed, numRuns },
    );
    // The generator must exercise the bash side, not only produce inputs the gate refuses.
    expect(runs.allowed).toBeGreaterThan(numRuns / 20);
    // The gate refuses every control character other than \n and \t (issue 11): none is ever allowed.
    expect(runs.control).toBe(0);
  }, 120_000);

  it('refuses `echo <NL>\\touch x`, which the parser once judged as one echo while bash ran touch', async () => {
    const split = await shellSplitter();
    const input = 'echo \n\\touch /tmp/x';
    expect(split(input).parseError).toMatch(/line break inside/);
    expect(decide({ tool: 'terminal', input, split: split(input) }, merged(BYPASS_POLICY)).outcome).toBe('deny');
  });
});
