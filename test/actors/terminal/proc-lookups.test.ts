/**
 * `which` (an executable on PATH) and `readStat` (one process's /proc stat line), against real files and real
 * processes: both read the file system without building an error for a missing entry, and must still tell
 * every case the old reads told.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { which } from '../../../actors/terminal/pty-spawn.ts';
import { readStat } from '../../../actors/terminal/terminal-proc.ts';

const dir = mkdtempSync(join(tmpdir(), 'skein-which-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function executable(path: string, mode = 0o755): string {
  writeFileSync(path, '#!/bin/sh\nexit 0\n');
  chmodSync(path, mode);
  return path;
}

describe('which: the first executable file of that name on PATH', () => {
  const missing = join(dir, 'missing');
  const notExec = join(dir, 'not-exec');
  const asDir = join(dir, 'as-dir');
  const asFile = join(dir, 'a-file');
  const good = join(dir, 'good');
  const later = join(dir, 'later');
  for (const d of [notExec, asDir, good, later]) mkdirSync(d);
  executable(join(notExec, 'prog'), 0o644);
  mkdirSync(join(asDir, 'prog'));
  writeFileSync(asFile, 'a file where PATH names a directory\n');
  const found = executable(join(good, 'prog'));
  executable(join(later, 'prog'));

  it('passes over a missing directory, a file it may not run, a directory, a file where a directory was named', () => {
    const path = [missing, notExec, asDir, asFile, '', good, later].join(':');
    expect(which('prog', path)).toBe(found);
  });

  it('is undefined when no entry has it, and checks a path with a slash as it is', () => {
    expect(which('prog', [missing, notExec, asDir, asFile].join(':'))).toBeUndefined();
    expect(which(found, missing)).toBe(found);
    expect(which(join(notExec, 'prog'), good)).toBeUndefined();
    expect(which(join(asDir, 'prog'), good)).toBeUndefined();
  });

  it('finds sh on the process PATH, as a terminal open does', () => {
    expect(which('sh')).toMatch(/\/sh$/);
  });
});

describe('readStat: a process by its /proc stat line', () => {
  it("reads a process's fields as /proc has them, a name with spaces and a ')', none for a gone pid", async () => {
    const self = readStat(process.pid)!;
    const fields = readFileSync(`/proc/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    expect(self).toMatchObject({ pid: process.pid, ppid: process.ppid, state: expect.stringMatching(/^[RS]$/) });
    expect([self.pgrp, self.session, self.tpgid]).toEqual([fields[2], fields[3], fields[5]].map(Number));
    expect(self.startTime).toBe(fields[19]);
    // A name the program chose (the file it was run as): spaces and a ')' inside it (the line is read up to the
    // last one).
    const name = 'a b) c';
    symlinkSync(which('sleep')!, join(dir, name));
    const child = spawn(join(dir, name), ['30'], { stdio: 'ignore' });
    try {
      await new Promise((r) => child.once('spawn', r));
      const stat = readStat(child.pid!)!;
      expect(stat).toMatchObject({ pid: child.pid, comm: name, ppid: process.pid });
      expect(stat.startTime).toMatch(/^\d+$/);
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
    // Reaped: the pid has no /proc entry (a reuse within this test is not possible: pids go up).
    expect(readStat(child.pid!)).toBeUndefined();
  });
});
