/**
 * A tool call waiting for a person's answer when its host stops gets its reply then, not at its own timeout:
 * the drain denies the request (by: cancelled, naming `host_stopping`), nothing runs, and the log says so, so
 * the next start finds nothing pending. Before, the host waited out its drain for that call, stopped without
 * replying, and the caller waited its whole timeout for a reply that never came (then read a hint to go and
 * answer a request that no longer existed).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { StoredFact } from '../../../schemas/index.ts';
import { startTestRuntime } from '../../support/runtime.ts';
import { tempDir } from '../../support/temp-dir.ts';

const POLICY = { default: 'allow', tools: { write_file: { default: 'confirm' } } };

describe.each(['embedded', 'private'] as const)('a pending tool call when the host stops (%s)', (mode) => {
  it('is answered at the drain, denied with host_stopping, and is not pending after a restart', async () => {
    const temp = tempDir('skein-stop-pending-');
    try {
      const rt = await startTestRuntime({ mode, dir: temp.path, policy: POLICY });
      // Far longer than the drain: a reply that waited for it would fail the test, not pass it late.
      const pending = rt.call('file.write', { path: 'never.txt', content: 'x' }, { timeoutMs: 25_000 });
      let requestId = '';
      await vi.waitFor(
        async () => {
          const r = await rt.call('permission.pending', {});
          const requests = (r as unknown as { requests: Array<{ requestId: string }> }).requests;
          expect(requests).toHaveLength(1);
          requestId = requests[0]!.requestId;
        },
        { timeout: 10_000, interval: 50 },
      );
      const stopped = rt.stop();
      const reply = await pending;
      await stopped;
      expect(reply.ok).toBe(false);
      const error = (reply as unknown as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('permission_denied');
      expect(error.message).toMatch(/host_stopping: the runtime stopped while this request waited; nothing ran/);
      expect(existsSync(join(rt.workspace, 'never.txt'))).toBe(false);

      const again = await startTestRuntime({ mode, dir: temp.path, policy: POLICY });
      try {
        const facts: StoredFact[] = [];
        for await (const f of again.log.read()) facts.push(f);
        const decided = facts.filter(
          (f) => f.type.startsWith('permission.') && (f.data as { requestId?: string }).requestId === requestId,
        );
        expect(decided.map((f) => [f.type, (f.data as { by?: string }).by])).toEqual([
          ['permission.requested', undefined],
          ['permission.denied', 'cancelled'],
        ]);
        expect(String((decided[1]!.data as { reason: string }).reason)).toMatch(/host_stopping/);
        const r = await again.call('permission.pending', {});
        expect((r as unknown as { requests: unknown[] }).requests).toEqual([]);
      } finally {
        await again.stop();
      }
    } finally {
      temp.dispose();
    }
  });
});
