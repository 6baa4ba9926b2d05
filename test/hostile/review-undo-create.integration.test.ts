/**
 * An undo of a reject-all creates again the files the agents had created (eb8d016). A review of it (7 December)
 * found, live:
 * - the files came back with the umask's mode: a `.env` the agent made 0600 came back world-readable 0644, a
 *   0755 script lost its exec bit. The reject now keeps each one's mode for the undo;
 * - a file made at the path while the undo committed (after it read the path free) was renamed over: a person's
 *   content lost, the reply saying all went well. A file a review creates is now linked in, never put over one:
 *   the other is kept and the reply names it as a conflict, and no log lists the review's content there. The
 *   same holds for a file a reject restores.
 * Canaries: the person's content, the secret's mode.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AppendRequest, EventLog } from '../../infra/transport/event-log.ts';
import { overLog } from '../support/fact-writer.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { tempDir } from '../support/temp-dir.ts';

const NO_RETRY = { log: { appendRetries: 0 } } as never;

describe('hostile: what an undo creates again', () => {
  let rt: TestRuntime | undefined;
  afterEach(async () => {
    await rt?.dispose();
    rt = undefined;
  });

  it('comes back with the mode the agent gave it: a 0600 secret is not made world-readable', async () => {
    rt = await startTestRuntime({ mode: 'embedded' });
    const { terminalId } = ok(await rt.call('terminal.open', {})) as { terminalId: string };
    ok(await rt.call('terminal.exec', { terminalId, command: 'true' }));
    const made = '(umask 077; echo TOKEN=CANARY > .env); printf "#!/bin/sh\\n" > run.sh; chmod 755 run.sh';
    ok(await rt.call('terminal.exec', { terminalId, command: made }));
    const mode = (f: string) => (statSync(join(rt!.workspace, f)).mode & 0o777).toString(8);
    expect([mode('.env'), mode('run.sh')]).toEqual(['600', '755']);
    ok(await rt.call('review.reject', {}));
    expect(existsSync(join(rt.workspace, '.env'))).toBe(false);
    const undo = ok(await rt.call('review.undo-reject', {}));
    expect((undo['reapplied'] as string[]).map((p) => p.slice(rt!.workspace.length + 1)).sort()).toEqual([
      '.env',
      'run.sh',
    ]);
    expect([mode('.env'), mode('run.sh')]).toEqual(['600', '755']);
    expect(readFileSync(join(rt.workspace, '.env'), 'utf8')).toBe('TOKEN=CANARY\n');
  }, 60_000);

  for (const kind of ['undo', 'reject'] as const) {
    it(`does not replace a file made at the path while the ${kind} commits: it is kept, a conflict`, async () => {
      let ws = '';
      let armed = false;
      const type = kind === 'undo' ? 'review.reject-undone' : 'review.rejected';
      // The window between the read that found the path free and the rename, widened: the file appears while the
      // review's fact is appended.
      const wrapLog = (log: EventLog): EventLog =>
        overLog(log, {
          async append(request: AppendRequest) {
            if (armed && request.fact.type === type) {
              armed = false;
              writeFileSync(join(ws, 'new.txt'), 'PERSON CANARY\n');
            }
            return log.append(request);
          },
        });
      rt = await startTestRuntime({ mode: 'embedded', wrapLog });
      ws = rt.workspace;
      const path = join(ws, 'new.txt');
      if (kind === 'undo') {
        ok(await rt.call('file.write', { path: 'new.txt', content: 'AGENT\n' }));
        ok(await rt.call('review.reject', {}));
      } else {
        writeFileSync(path, 'BASE\n');
        const { terminalId } = ok(await rt.call('terminal.open', {})) as { terminalId: string };
        ok(await rt.call('terminal.exec', { terminalId, command: 'true' }));
        ok(await rt.call('terminal.exec', { terminalId, command: 'rm new.txt' }));
      }
      expect(existsSync(path)).toBe(false);
      armed = true;
      const reply = ok(await rt.call(kind === 'undo' ? 'review.undo-reject' : 'review.reject', {}));
      expect(armed).toBe(false);
      expect(readFileSync(path, 'utf8')).toBe('PERSON CANARY\n');
      expect(reply[kind === 'undo' ? 'reapplied' : 'restored']).toEqual([]);
      expect(reply['conflicts']).toEqual([
        { path, hunkIds: [], reason: expect.stringContaining('was created on disk while this ran') },
      ]);
      expect(readdirSync(ws).filter((name) => name.includes('.skein-'))).toEqual([]);
      // No log lists the review's content there, where the disk holds the other file.
      expect(ok(await rt.call('review.list', {}))['files']).toEqual([]);
    }, 60_000);
  }
  it('an undo in doubt, finished by the re-read after a file was made at the path: no log lists it', async () => {
    const dir = tempDir('skein-undo-doubt-');
    try {
      let armed = false;
      const wrapLog = (log: EventLog): EventLog =>
        overLog(log, {
          async append(request: AppendRequest) {
            const result = await log.append(request);
            if (armed && request.fact.type === 'review.reject-undone') {
              armed = false;
              throw new Error('TimeoutError: timeout'); // stored, the answer lost
            }
            return result;
          },
        });
      rt = await startTestRuntime({ mode: 'embedded', dir: dir.path, wrapLog, flags: NO_RETRY, logLevel: 'info' });
      ok(await rt.call('agent.spawn', { label: 'kid', agentId: 'kid' }));
      const path = join(rt.workspace, 'new.txt');
      ok(await rt.call('file.write', { path: 'new.txt', content: 'AGENT\n' }, { agentId: 'kid' }));
      ok(await rt.call('review.reject', {}));
      armed = true;
      expect((await rt.call('review.undo-reject', {})).ok).toBe(false);
      writeFileSync(path, 'PERSON CANARY\n'); // before the writer's re-read finishes the undo
      const listed = async (agentId: string) => ok(await rt!.call('review.list', {}, { agentId }))['files'];
      await vi.waitFor(() => expect(rt!.logs.some((l) => String(l['msg']).includes('is finished'))).toBe(true), {
        timeout: 10_000,
      });
      expect([await listed('main'), await listed('kid')]).toEqual([[], []]);
      await rt.dispose();
      rt = await startTestRuntime({ mode: 'embedded', dir: dir.path });
      expect([await listed('main'), await listed('kid')]).toEqual([[], []]);
      expect(readFileSync(path, 'utf8')).toBe('PERSON CANARY\n');
    } finally {
      await rt?.dispose();
      rt = undefined;
      dir.dispose();
    }
  }, 30_000);
});

describe('hostile: what a reject restores', () => {
  let rt: TestRuntime | undefined;
  afterEach(async () => {
    await rt?.dispose();
    rt = undefined;
  });

  it("brings a file an agent's shell deleted back with its mode, in the agent's log and its parent's", async () => {
    // Until 8 December the log kept no mode: a 0755 script came back 0644 and a 0600 secret world-readable. The
    // bits a setuid agent left on a file before deleting it are not given back (only 0777's).
    rt = await startTestRuntime({ mode: 'embedded' });
    const ws = rt.workspace;
    const mode = (f: string) => (statSync(join(ws, f)).mode & 0o7777).toString(8);
    writeFileSync(join(ws, 'run.sh'), '#!/bin/sh\necho run\n', { mode: 0o755 });
    writeFileSync(join(ws, '.env'), 'TOKEN=CANARY\n', { mode: 0o600 });
    writeFileSync(join(ws, 'kid.sh'), '#!/bin/sh\necho kid\n', { mode: 0o750 });
    writeFileSync(join(ws, 'suid.sh'), '#!/bin/sh\n', { mode: 0o755 });
    ok(await rt.call('agent.spawn', { label: 'kid', agentId: 'kid' }));
    const open = async (agentId: string) =>
      (ok(await rt!.call('terminal.open', {}, { agentId })) as { terminalId: string }).terminalId;
    const [main, kid] = [await open('main'), await open('kid')];
    ok(await rt.call('terminal.exec', { terminalId: main, command: 'true' }));
    ok(await rt.call('terminal.exec', { terminalId: kid, command: 'true' }, { agentId: 'kid' }));
    ok(await rt.call('terminal.exec', { terminalId: main, command: 'chmod 4755 suid.sh && rm run.sh .env suid.sh' }));
    ok(await rt.call('terminal.exec', { terminalId: kid, command: 'rm kid.sh' }, { agentId: 'kid' }));
    const reply = ok(await rt.call('review.reject', {}));
    expect((reply['restored'] as string[]).map((p) => p.slice(ws.length + 1)).sort()).toEqual([
      '.env',
      'kid.sh',
      'run.sh',
      'suid.sh',
    ]);
    expect([mode('run.sh'), mode('.env'), mode('kid.sh'), mode('suid.sh')]).toEqual(['755', '600', '750', '755']);
    expect(readFileSync(join(ws, '.env'), 'utf8')).toBe('TOKEN=CANARY\n');
  }, 60_000);
});
