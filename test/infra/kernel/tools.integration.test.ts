/**
 * Edits, permissions and the action log through the host over real NATS:
 * a sub-agent's confirmed tool call answered by its parent, edits recorded
 * in every ancestor's log, reject-all and undo-reject on real files, the
 * gate in front of every tool, and replay of it all to the live digest.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subjectFor } from '../../../schemas/index.ts';
import { decodeFact } from '../../../infra/transport/codec.ts';
import { AGGREGATES } from '../../../infra/kernel/domains.ts';
import { replay } from '../../../infra/kernel/replay.ts';
import { startNetworkedRuntime, type TestRuntime } from '../../support/runtime.ts';
import { ok } from '../../support/replies.ts';

describe('tools through the host (networked)', () => {
  let rt: TestRuntime;
  beforeAll(async () => {
    // Project policy: agents may spawn and read; writes to docs/ must be confirmed; rm is denied.
    rt = await startNetworkedRuntime({
      policy: {
        default: 'allow',
        tools: {
          write_file: { always_confirm: [{ pattern: '^docs/' }], always_deny: [{ pattern: '^secrets/' }] },
          terminal: { always_deny: [{ pattern: '^rm\\b' }] },
        },
      },
    });
    writeFileSync(join(rt.workspace, 'base.txt'), 'one\ntwo\nthree\n');
    mkdirSync(join(rt.workspace, 'docs'));
    mkdirSync(join(rt.workspace, 'secrets'));
  });
  afterAll(async () => rt?.dispose());

  it('records a grandchild edit in its own, its parent and the root action logs; reject and undo-reject', async () => {
    ok(await rt.call('agent.spawn', { label: 'lead', agentId: 'lead' }));
    ok(await rt.call('agent.spawn', { label: 'worker', agentId: 'worker' }, { agentId: 'lead' }));
    const edited = ok(
      await rt.call(
        'file.edit',
        { path: 'base.txt', edits: [{ oldText: 'two', newText: 'TWO' }] },
        { agentId: 'worker' },
      ),
    );
    expect(edited['linesAdded']).toBe(1);
    ok(await rt.call('file.write', { path: 'new.txt', content: 'created\n' }, { agentId: 'worker' }));
    expect(readFileSync(join(rt.workspace, 'base.txt'), 'utf8')).toBe('one\nTWO\nthree\n');

    for (const who of ['worker', 'lead', 'main']) {
      const list = ok(await rt.call('review.list', {}, { agentId: who }));
      const files = (list['files'] as Array<{ path: string; status: string; agents: string[] }>).map((f) => [
        f.path.replace(rt.workspace, '.'),
        f.status,
        f.agents,
      ]);
      expect(files).toEqual([
        ['./base.txt', 'modified', ['worker']],
        ['./new.txt', 'created', ['worker']],
      ]);
    }

    const rejected = ok(await rt.call('review.reject', {}));
    expect(rejected['undoAvailable']).toBe(true);
    expect(readFileSync(join(rt.workspace, 'base.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    expect(existsSync(join(rt.workspace, 'new.txt'))).toBe(false);
    expect((ok(await rt.call('review.list', {}, { agentId: 'worker' }))['files'] as unknown[]).length).toBe(0);

    const undone = ok(await rt.call('review.undo-reject', {}));
    expect(readFileSync(join(rt.workspace, 'base.txt'), 'utf8')).toBe('one\nTWO\nthree\n');
    expect(undone['notRestorable']).toEqual([]);
    expect(readFileSync(join(rt.workspace, 'new.txt'), 'utf8')).toBe('created\n');
    expect((ok(await rt.call('review.list', {}, { agentId: 'worker' }))['files'] as unknown[]).length).toBe(2);
  });

  it("asks for a sub-agent's confirmed write; its parent answers on skein.ask and the write proceeds", async () => {
    const asks: string[] = [];
    const sub = rt.bus.subscribe('skein.ask.lead.>', (msg) => asks.push(decodeFact(msg.subject, msg.data).type));
    await rt.bus.flush();
    const write = rt.call('file.write', { path: 'docs/guide.md', content: '# guide\n' }, { agentId: 'worker' });
    await expect.poll(() => asks.length, { timeout: 10_000 }).toBe(1);
    const pending = ok(await rt.call('permission.pending', {}, { agentId: 'lead' }));
    const [request] = pending['requests'] as Array<{ requestId: string; agentId: string; tool: string; input: string }>;
    expect(request).toMatchObject({ agentId: 'worker', tool: 'write_file', input: 'docs/guide.md' });
    // A sibling or the requester itself may not answer.
    const selfAnswer = await rt.call(
      'permission.decide',
      { requestId: request!.requestId, decision: 'allow_once' },
      { agentId: 'worker' },
    );
    expect(selfAnswer).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    const decided = ok(
      await rt.call(
        'permission.decide',
        { requestId: request!.requestId, decision: 'allow_once' },
        { agentId: 'lead' },
      ),
    );
    expect(decided).toMatchObject({ outcome: 'granted', by: 'parent' });
    ok(await write);
    expect(readFileSync(join(rt.workspace, 'docs/guide.md'), 'utf8')).toBe('# guide\n');
    // Deciding again is idempotent.
    expect(
      ok(
        await rt.call(
          'permission.decide',
          { requestId: request!.requestId, decision: 'deny_once' },
          { agentId: 'lead' },
        ),
      ),
    ).toMatchObject({ outcome: 'granted', alreadyDecided: true });
    sub.unsubscribe();
  });

  it('denies by rule with a message that says what and how to proceed; nothing runs', async () => {
    const denied = await rt.call('file.write', { path: 'secrets/key.pem', content: 'x' }, { agentId: 'worker' });
    expect(denied).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    if (!denied.ok) expect(denied.error.message).toMatch(/secrets\/key\.pem/);
    expect(existsSync(join(rt.workspace, 'secrets/key.pem'))).toBe(false);
  });

  it('refuses paths outside the workspace and a missing parent directory, naming them', async () => {
    const outside = await rt.call('file.write', { path: '../escape.txt', content: 'x' }, { agentId: 'worker' });
    expect(outside).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(existsSync(join(rt.workspace, '../escape.txt'))).toBe(false);
    // file.write creates missing parents (issue 14); file.edit still names the missing directory.
    const missing = await rt.call(
      'file.edit',
      { path: 'no/such/dir/x.txt', edits: [{ oldText: 'a', newText: 'b' }] },
      { agentId: 'worker' },
    );
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.error.message).toMatch(/no\/such\/dir/);
  });

  it("publishes the permission facts on the requester's subjects", async () => {
    const subjects: string[] = [];
    for await (const f of rt.log.read()) if (f.type === 'permission.requested') subjects.push(f.subject);
    expect(subjects).toHaveLength(1);
    const prefix = subjectFor({ kind: 'evt', agentId: 'worker', aggregate: 'permission', aggregateId: 'x' }).slice(
      0,
      -1,
    );
    expect(subjects[0]).toMatch(new RegExp(`^${prefix.replaceAll('.', '\\.')}p-`));
  });

  it('replays the whole log to the live digest', async () => {
    const status = ok(await rt.call('runtime.status'));
    const replayed = await replay(rt.log.read(), AGGREGATES);
    expect(replayed.digest).toBe(status['digest']);
  });
});
