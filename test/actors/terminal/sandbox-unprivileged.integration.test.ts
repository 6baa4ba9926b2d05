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

describe.skipIf(!root || !which('bwrap') || !which('setpriv'))(
  'a sandboxed terminal of a runtime not run as root',
  () => {
    it('opens, runs as that user, writes its workspace and nothing else, and closes', () => {
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
          `  config: { sandbox: true }, scratchDir: '${data}/sandbox',`,
          "  log: createLogger({ level: 'silent' }), emit: async () => {}, emitOutput: async () => {},",
          '});',
          'try {',
          `  const o = await m.open('a1', { cwd: '${ws}' }, { workspace: '${ws}' });`,
          "  const command = 'id -u; echo inside > ok.txt && cat ok.txt; ' +",
          "    'touch /etc/skein-probe 2>/dev/null || echo no-etc';",
          "  const r = await m.exec('a1', { terminalId: o.terminalId, command });",
          '  console.log(JSON.stringify({ sandbox: o.sandbox, exitCode: r.exitCode, output: r.output }));',
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
      const result = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
      expect(result).toEqual({ sandbox: true, exitCode: 0, output: `${NOBODY}\ninside\nno-etc\n` });
    });
  },
);
