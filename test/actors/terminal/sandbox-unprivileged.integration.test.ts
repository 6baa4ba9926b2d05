/**
 * A runtime not run as root (as the README allows: the per-agent limits are then off, with a warning) still opens
 * sandboxed terminals. Run as root, this test starts a terminal manager in a child process as `nobody` (setpriv)
 * and runs a command in a sandboxed terminal: bubblewrap works differently for an unprivileged user (a second user
 * namespace gives the shell that user's uid), and the tenth session's sandbox init broke every sandbox there
 * (util-linux `mount` refuses a non-root user) without a test run as root seeing it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { which } from '../../../actors/terminal/pty-spawn.ts';

const NOBODY = 65_534;
const root = process.getuid?.() === 0;
const repo = resolve(import.meta.dirname, '../../..');
const manager = pathToFileURL(join(repo, 'actors/terminal/terminal-manager.ts')).href;
const logger = pathToFileURL(join(repo, 'infra/kernel/log.ts')).href;

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Runs `command` in a sandboxed terminal of a terminal manager (with `config`) started as `nobody`, and returns what
 * the exec replied, or the message it failed with.
 */
function runAsNobody(config: Record<string, unknown>, command: string) {
  dir = mkdtempSync(join(tmpdir(), 'skein-unprivileged-'));
  const [home, ws, data] = ['home', 'ws', 'data'].map((name) => join(dir, name)) as [string, string, string];
  for (const d of [home, ws, data]) mkdirSync(d);
  const script = join(dir, 'open.mts');
  writeFileSync(
    script,
    [
      `import { TerminalManager } from '${manager}';`,
      `import { createLogger } from '${logger}';`,
      'const m = new TerminalManager({',
      `  config: ${JSON.stringify({ sandbox: true, ...config })}, scratchDir: '${data}/sandbox',`,
      "  log: createLogger({ level: 'silent' }), emit: async () => {}, emitOutput: async () => {},",
      '});',
      'try {',
      `  const o = await m.open('a1', { cwd: '${ws}' }, { workspace: '${ws}' });`,
      `  const r = await m.exec('a1', { terminalId: o.terminalId, command: ${JSON.stringify(command)} }).catch(`,
      '    (err) => ({ error: err.message }));',
      '  console.log(JSON.stringify({ sandbox: o.sandbox, ...r }));',
      '} finally {',
      '  await m.shutdown();',
      '}',
    ].join('\n'),
  );
  execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, dir]);
  chmodSync(dir, 0o755);
  const drop = [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--'];
  const r = spawnSync(which('setpriv')!, [...drop, process.execPath, '--import', 'tsx', script], {
    cwd: repo,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home, TMPDIR: dir },
    timeout: 60_000,
  });
  expect(r.status, `${r.stderr}\n${r.stdout}`).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!);
}

describe.skipIf(!root || !which('bwrap') || !which('setpriv'))(
  'a sandboxed terminal of a runtime not run as root',
  () => {
    it('opens, runs as that user, writes its workspace and nothing else, and closes', () => {
      const command = 'id -u; echo inside > ok.txt && cat ok.txt; touch /etc/skein-probe 2>/dev/null || echo no-etc';
      const result = runAsNobody({}, command);
      expect({ sandbox: result.sandbox, exitCode: result.exitCode, output: result.output }).toEqual({
        sandbox: true,
        exitCode: 0,
        output: `${NOBODY}\ninside\nno-etc\n`,
      });
    });

    it('counts the scratch an agent hid in a directory closed to the runtime user (its own uid)', () => {
      const command =
        `mkdir /tmp/h /tmp/h/in; head -c ${32 * 1024 * 1024} /dev/zero > /tmp/h/in/x; chmod 000 /tmp/h/in; ` +
        'chmod 100 /tmp/h; sleep 30; echo FILLED-CANARY';
      const result = runAsNobody({ maxScratchPerAgent: 16 * 1024 * 1024, scratchCheckMs: 100 }, command);
      expect(result.error).toContain('maxScratchPerAgent (16.0 MiB)');
      expect(JSON.stringify(result)).not.toContain('FILLED-CANARY');
    });

    it('counts a deleted file kept open, its processes found below the PTY leader (no cgroup leaf)', () => {
      const fill = `head -c ${32 * 1024 * 1024} /dev/zero >&3`;
      const command = `exec 3>/tmp/gone; rm /tmp/gone; ${fill}; sleep 30; echo FILLED-CANARY`;
      const result = runAsNobody({ maxScratchPerAgent: 16 * 1024 * 1024, scratchCheckMs: 100 }, command);
      expect(result.error).toContain('maxScratchPerAgent (16.0 MiB)');
      expect(JSON.stringify(result)).not.toContain('FILLED-CANARY');
    });
  },
);
