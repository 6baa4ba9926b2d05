/**
 * An "always" answer of an ancestor below the root. Only the human (or the root) may widen the shared project
 * policy, and any ancestor could narrow it: agent `a`, answering its child's ask with deny_always and a pattern
 * of its own (`.*`), wrote that rule into `.skein/policy.json`, and from then on the root and `a`'s sibling were
 * denied every file write. The rule now joins `a`'s own layer: it binds `a` and its subtree, nobody else.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstPending, ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

let rt: TestRuntime;
const policyFile = () => readFileSync(join(rt.workspace, '.skein', 'policy.json'), 'utf8');
const write = (agentId: string, path: string) => rt.call('file.write', { path, content: 'x\n' }, { agentId });

beforeAll(async () => {
  rt = await startTestRuntime({
    mode: 'embedded',
    policy: { default: 'allow', tools: { write_file: { always_confirm: [{ pattern: '^ask' }] } } },
  });
  for (const [agentId, parent] of [
    ['a', 'main'],
    ['b', 'main'],
    ['a1', 'a'],
  ] as const)
    ok(await rt.call('agent.spawn', { label: agentId, agentId }, { agentId: parent }));
}, 60_000);
afterAll(async () => {
  await rt?.dispose();
});

describe("an ancestor's deny_always binds its own subtree, not the project", () => {
  it('leaves the project file, the root and the sibling alone; denies the answerer and its subtree', async () => {
    const before = policyFile();
    const asked = write('a1', 'ask-1.txt');
    const requestId = await firstPending(rt, 'a');
    const decided = ok(
      await rt.call('permission.decide', { requestId, decision: 'deny_always', pattern: '.*' }, { agentId: 'a' }),
    );
    expect(decided).toMatchObject({ outcome: 'denied', by: 'parent' });
    expect(await asked).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    // Canaries: the shared file learned nothing, and the root and the sibling still write.
    expect(policyFile()).toBe(before);
    expect(await write('main', 'main.txt')).toMatchObject({ ok: true });
    expect(await write('b', 'b.txt')).toMatchObject({ ok: true });
    // The rule holds where `a` may narrow: itself and its subtree, an agent spawned later included.
    expect(await write('a1', 'plain.txt')).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(await write('a', 'a.txt')).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    ok(await rt.call('agent.spawn', { label: 'a2', agentId: 'a2' }, { agentId: 'a' }));
    expect(await write('a2', 'a2.txt')).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
  });
});
