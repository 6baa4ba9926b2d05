/**
 * A host keeps no state per tool call the rules decided (issue 15: one snapshot per command, ~1 KiB, held for
 * the host's life): the fold does not grow with commands, a replay folds the same (equal digests), and the
 * grants are still in the log; deciding one again is answered from the service's memory. A request that asked
 * keeps its aggregate, before and after it is answered.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredFact } from '../../../schemas/index.ts';
import { AGGREGATES } from '../../../infra/kernel/domains.ts';
import { replay } from '../../../infra/kernel/replay.ts';
import { call } from '../../../infra/transport/client.ts';
import { ok } from '../../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';

const permissionSubjects = (rt: TestRuntime) => [...rt.host.subjects()].filter((s) => s.includes('.permission.'));

describe('permission decisions of the rules alone', () => {
  let rt: TestRuntime;
  beforeAll(async () => {
    rt = await startTestRuntime({
      mode: 'embedded',
      policy: {
        default: 'allow',
        tools: { write_file: { default: 'confirm' }, terminal: { always_deny: [{ pattern: '^rm\\b' }] } },
      },
    });
  });
  afterAll(async () => rt?.dispose());

  it('leave no aggregate per call, fold the same on replay, and are still logged and answered', async () => {
    const { terminalId } = ok(await rt.call('terminal.open', {}));
    const before = rt.host.fold.size;
    for (let i = 0; i < 20; i++) ok(await rt.call('terminal.exec', { terminalId, command: `echo ${i}` }));
    expect(rt.host.fold.size).toBe(before);
    expect(permissionSubjects(rt)).toEqual([]);

    const facts: StoredFact[] = [];
    for await (const f of rt.log.read()) facts.push(f);
    const grants = facts.filter((f) => f.type === 'permission.granted');
    expect(grants.length).toBeGreaterThanOrEqual(20);
    const replayed = await replay(rt.log.read(), AGGREGATES);
    expect(replayed.digest).toBe(rt.host.digest());
    expect(replayed.fold.size).toBe(rt.host.fold.size);

    // Each grant is appended after its command is typed, yet before the command's first fact.
    const order = facts.filter((f) => f.type === 'permission.granted' || f.type === 'terminal.command.started');
    const execs = order.slice(order.findIndex((f) => f.type === 'terminal.command.started') - 1);
    expect(execs.map((f) => f.type)).toEqual(
      Array.from({ length: 20 }, () => ['permission.granted', 'terminal.command.started']).flat(),
    );
    const requestId = (grants.at(-1)!.data as { requestId: string }).requestId;
    expect(ok(await rt.call('permission.decide', { requestId, decision: 'deny_once' }))).toMatchObject({
      requestId,
      outcome: 'granted',
      alreadyDecided: true,
    });
  });

  it('are appended before the facts of the tool, for a tool that then fails, and for a denial', async () => {
    writeFileSync(join(rt.workspace, 'read-me.txt'), 'x\n');
    expect(ok(await rt.call('file.read', { path: 'read-me.txt' }, { id: 'read-1' }))['content']).toBe('x\n');
    // Granted, then the handler fails before any fact of its own: the grant is still appended, and replied.
    // (A terminal that is not there, or another agent's, is refused before the policy: no decision at all.)
    const terminalId = String(ok(await rt.call('terminal.open', {}))['terminalId']);
    const undeclared = { terminalId, command: 'echo hi', resources: ['nowhere'] };
    const missing = await rt.call('terminal.exec', undeclared, { id: 'gone-1' });
    expect(missing).toMatchObject({ ok: false, error: { code: 'invalid_message' } });
    const denied = await rt.call('terminal.exec', { terminalId, command: 'rm -rf x' }, { id: 'rm-1' });
    expect(denied).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    const facts: StoredFact[] = [];
    for await (const f of rt.log.read()) facts.push(f);
    const byCause = (id: string) => facts.filter((f) => f.causationId === id).map((f) => f.type);
    expect(byCause('read-1')).toEqual(['permission.granted', 'file.read.recorded']);
    expect(byCause('gone-1')).toEqual(['permission.granted']);
    expect(byCause('rm-1')).toEqual(['permission.denied']);
  });

  it('keep the aggregate of a request that asked, pending and then answered', async () => {
    const write = call(rt.bus, 'main', 'file.write', { path: 'asked.txt', content: 'x' }, { timeoutMs: 30_000 });
    let requests: Array<Record<string, unknown>> = [];
    await expect
      .poll(async () => (requests = ok(await rt.call('permission.pending'))['requests']).length, { timeout: 15_000 })
      .toBe(1);
    const requestId = String(requests[0]!['requestId']);
    const subject = () => permissionSubjects(rt).find((s) => s.endsWith(`.${requestId}`));
    // The service lists a request as it starts asking; its `permission.requested` is folded once appended.
    await expect.poll(() => rt.host.state(subject() ?? '')?.value, { timeout: 10_000 }).toBe('pending');
    ok(await rt.call('permission.decide', { requestId, decision: 'allow_once' }));
    ok(await write);
    expect(rt.host.state(subject()!)?.value).toBe('granted');
    const replayed = await replay(rt.log.read(), AGGREGATES);
    expect(replayed.digest).toBe(rt.host.digest());
  });
});
