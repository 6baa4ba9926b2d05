/**
 * The shell gate against real bash, side by side (the four audits of 5 December, as a test): generated command
 * lines that run `rm -f <file>` through bash's ways of hiding a command (`shell-fuzz-lines.ts`) go through the gate
 * under a policy that allows by default and denies `^rm\b`; every line it allows runs in bash 5.2 in a bwrap
 * sandbox, sourced with `expand_aliases` as skein delivers commands, with a fake rm bound over /usr/bin/rm that
 * writes down what it was asked to remove. A line the gate allowed whose rm ran is a hole. Two controls keep the
 * test from passing by default: most of the lines must really run rm when bash runs them regardless of the gate
 * (the generator makes working attacks), and the same shapes around a harmless `touch` must mostly be allowed (the
 * gate judges them, it does not ask about everything). The seed is printed; `FC_SEED=<n>` replays a run.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { which } from '../../actors/terminal/pty-spawn.ts';
import { decideTerminal, merged } from '../support/permission-fixtures.ts';
import { propertySeed } from '../support/seed.ts';
import { fuzzCase, lineOf, type FuzzCase } from './shell-fuzz-lines.ts';

const POLICY = merged({ default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } });
/** Lines the gate judges per run (~1 ms each). */
const CASES = 1500;
/** Of those, how many bash runs whatever the gate says (~20 ms each), for the first control. */
const SAMPLE = 150;

/**
 * Runs each line in its own bash (a 3 s limit each) in one bwrap sandbox, each in a folder of its own; returns
 * the indexes of the lines whose rm ran (the fake rm logs its arguments, which name `keep-<index>.txt`).
 */
function ranRm(lines: ReadonlyMap<number, string>): Set<number> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-shell-fuzz-'));
  try {
    mkdirSync(join(dir, 'c'));
    writeFileSync(join(dir, 'fake-rm'), '#!/bin/sh\nprintf "%s\\n" "$*" >> /tmp/w/ran.log\n');
    chmodSync(join(dir, 'fake-rm'), 0o755);
    for (const [i, line] of lines) {
      mkdirSync(join(dir, 'c', String(i)));
      writeFileSync(join(dir, 'c', String(i), 'cmd'), `${line}\n`);
    }
    writeFileSync(
      join(dir, 'driver.sh'),
      'for d in /tmp/w/c/*/; do [ -d "$d" ] || continue; cd "$d" && timeout -s KILL 3 ' +
        "bash -c 'shopt -s expand_aliases; . ./cmd' </dev/null >/dev/null 2>&1; done; true\n",
    );
    execFileSync(
      'bwrap',
      [
        '--ro-bind',
        '/',
        '/',
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--tmpfs',
        '/tmp',
        '--bind',
        dir,
        '/tmp/w',
        '--ro-bind',
        join(dir, 'fake-rm'),
        '/usr/bin/rm',
        '--unshare-all',
        '--die-with-parent',
        '--chdir',
        '/tmp/w',
        'bash',
        '/tmp/w/driver.sh',
      ],
      { stdio: 'ignore', timeout: 600_000 },
    );
    const log = existsSync(join(dir, 'ran.log')) ? readFileSync(join(dir, 'ran.log'), 'utf8') : '';
    return new Set([...log.matchAll(/keep-(\d+)\.txt/g)].map((m) => Number(m[1])));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the shell gate beside real bash (generated lines, one deny rule on rm)', () => {
  let cases: FuzzCase[];
  let lines: string[];
  beforeAll(() => {
    if (!which('bwrap')) throw new Error('bwrap is not installed: apt-get install -y bubblewrap (CI installs it)');
    cases = fc.sample(fuzzCase, { seed: propertySeed(), numRuns: CASES });
    lines = cases.map((c, i) => lineOf(c, `keep-${i}.txt`));
  });

  it('allows no line whose rm bash runs', async () => {
    const allowed = new Map<number, string>();
    for (const [i, line] of lines.entries()) {
      if ((await decideTerminal(POLICY, line)).outcome === 'allow') allowed.set(i, line);
    }
    const holes = [...ranRm(allowed)].map((i) => lines[i]);
    expect(holes).toEqual([]);
  }, 120_000);

  it('control: bash runs rm from most of the lines when nothing stops it (the attacks work)', () => {
    const sample = new Map(lines.slice(0, SAMPLE).map((line, i) => [i, line] as const));
    const ran = ranRm(sample);
    expect(ran.size / SAMPLE).toBeGreaterThanOrEqual(0.75);
  }, 120_000);

  it('control: the same shapes around a harmless touch are mostly allowed (the gate reads them)', async () => {
    let allowed = 0;
    for (const [i, c] of cases.entries()) {
      const line = lineOf(c, `keep-${i}.txt`, 'touch');
      if ((await decideTerminal(POLICY, line)).outcome === 'allow') allowed++;
    }
    // ~55% here: a substitution's output used as words asks by design (`echo $(touch f)`), and a third of the
    // layers substitute.
    expect(allowed / cases.length).toBeGreaterThanOrEqual(0.4);
  }, 120_000);
});
