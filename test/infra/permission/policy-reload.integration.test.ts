/**
 * Issue 14, "policy files are reloaded on change": a real runtime over a private nats-server with real
 * terminals. An edited project or global policy file decides the next call without a restart and is recorded
 * (`policy.changed`, reloaded) so the log replays to the live state; a broken file is refused
 * (`policy.file.rejected` naming the error) and the previous policy holds. Hostile: an agent, in a sandboxed
 * and in an unsandboxed terminal, cannot widen its own policy by writing `.skein/policy.json`: the command asks,
 * denied it changes nothing, and the canary marker it would write never reaches the file or the log.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AGGREGATES } from '../../../infra/kernel/domains.ts';
import { replay } from '../../../infra/kernel/replay.ts';
import { ok } from '../../support/replies.ts';
import type { TestRuntime } from '../../support/runtime.ts';
import { canary, expectNoCanary, hostileRuntime, outcome, type Canary } from '../../hostile/support.ts';

const DENY_TOUCH = { default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^touch\\b' }] } } };

let rt: TestRuntime;
let policyFile: string;
let globalFile: string;
const terminals = new Map<string, string>();
const canaries: Canary[] = [];

beforeAll(async () => {
  rt = await hostileRuntime(DENY_TOUCH, {
    domains: { permission: { timeoutMs: 20_000 }, terminal: { sandboxOffFor: ['loose'] } },
  });
  policyFile = join(rt.workspace, '.skein', 'policy.json');
  globalFile = join(rt.dir, 'no-global-policy.json');
  ok(await rt.call('agent.spawn', { label: 'loose', agentId: 'loose' }));
  for (const agentId of ['main', 'loose']) {
    terminals.set(agentId, String(ok(await rt.call('terminal.open', {}, { agentId }))['terminalId']));
  }
}, 60_000);
afterAll(async () => {
  await rt?.dispose();
  for (const c of canaries) c.dispose();
});

const exec = (command: string, agentId = 'main') =>
  rt.call('terminal.exec', { terminalId: terminals.get(agentId), command, timeoutMs: 10_000 }, { agentId });

async function factsAfter(seq: number, type: string): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  await rt.log.scan({ stream: 'events', fromSeq: seq + 1 }, (f) => {
    if (f.type === type) out.push(f.data as Record<string, unknown>);
  });
  return out;
}

/** Writes a policy file as a person would (in place, not atomically) and waits for the fact it causes. */
async function edit(path: string, text: string, fact: 'policy.changed' | 'policy.file.rejected') {
  const before = await rt.log.lastSeq('events');
  writeFileSync(path, text);
  let found: Array<Record<string, unknown>> = [];
  await expect
    .poll(async () => (found = await factsAfter(before, fact)).length, { timeout: 10_000 })
    .toBeGreaterThan(0);
  return found.at(-1)!;
}

describe('policy files are reloaded on change', () => {
  it('an edited project file decides the next call, and the fact records the new policy', async () => {
    expect(outcome(await exec('touch a.txt'))).toBe('permission_denied');
    const changed = await edit(policyFile, JSON.stringify({ default: 'allow' }), 'policy.changed');
    expect(changed).toMatchObject({ layer: 'project', path: policyFile, reloaded: true, policy: { default: 'allow' } });
    expect(outcome(await exec('touch a.txt'))).toBe('ok');
  });

  it('a broken file is refused naming the error, and the previous policy holds (never fail open)', async () => {
    await edit(policyFile, JSON.stringify(DENY_TOUCH), 'policy.changed');
    expect(outcome(await exec('touch b.txt'))).toBe('permission_denied');
    const json = await edit(policyFile, '{ "default": "allow", ', 'policy.file.rejected');
    expect(json).toMatchObject({ layer: 'project', path: policyFile, error: expect.stringMatching(/not valid JSON/) });
    expect(outcome(await exec('touch b.txt'))).toBe('permission_denied');
    const key = await edit(policyFile, JSON.stringify({ default: 'sometimes' }), 'policy.file.rejected');
    expect(key['error']).toMatch(/default/);
    expect(outcome(await exec('touch b.txt'))).toBe('permission_denied');
  });

  it('the global file is watched too', async () => {
    expect(outcome(await exec('mkdir -p g1'))).toBe('ok');
    const policy = { tools: { terminal: { always_deny: [{ pattern: '^mkdir\\b' }] } } };
    expect(await edit(globalFile, JSON.stringify(policy), 'policy.changed')).toMatchObject({
      layer: 'global',
      path: globalFile,
    });
    expect(outcome(await exec('mkdir -p g2'))).toBe('permission_denied');
  });

  it('replays to the live digest and the live policy layers', async () => {
    const status = ok(await rt.call('runtime.status'));
    const replayed = await replay(rt.log.read(), AGGREGATES);
    expect(replayed.digest).toBe(status['digest']);
    const live = rt.host.fold.states();
    const layers = Object.keys(live).filter((s) => live[s]?.aggregate === 'policy');
    expect(layers.length).toBeGreaterThanOrEqual(2);
    for (const s of layers) expect(replayed.fold.states()[s]?.context).toEqual(live[s]?.context);
    const project = Object.values(live).find((s) => (s.context as { layerId?: string }).layerId === 'project');
    expect(project?.context).toMatchObject({ policy: { default: 'allow' }, rejected: { path: policyFile } });
  });
  it("skein's own write of the file (policy.set) is recorded once, not again as a reload", async () => {
    const seq = await rt.log.lastSeq('events');
    ok(await rt.call('policy.set', { layer: 'project', policy: DENY_TOUCH }));
    await new Promise((r) => setTimeout(r, 400)); // several watch debounces
    expect((await factsAfter(seq, 'policy.changed')).map((d) => d['reloaded'] ?? false)).toEqual([false]);
  });
});

describe('an agent cannot widen its own policy through the shell', () => {
  const ATTACKS: Array<[string, (k: Canary) => string]> = [
    ['redirect', (k) => `printf '${widen}' ${k.halves[0]} ${k.halves[1]} > .skein/policy.json`],
    ['cd first', (k) => `cd .skein && printf '${widen}' ${k.halves[0]} ${k.halves[1]} > policy.json`],
    ['glob', (k) => `printf '${widen}' ${k.halves[0]} ${k.halves[1]} > .sk*/policy.json`],
    ['copy', (k) => `printf '${widen}' ${k.halves[0]} ${k.halves[1]} > w.json && cp w.json ./.skein/policy.json`],
  ];

  for (const agentId of ['main', 'loose']) {
    for (const [name, command] of ATTACKS) {
      it(`${agentId === 'main' ? 'sandboxed' : 'unsandboxed'} terminal: ${name}`, async () => {
        const k = canary(rt.workspace);
        canaries.push(k);
        const before = readFileSync(policyFile, 'utf8');
        const seq = await rt.log.lastSeq('events');
        const run = exec(command(k), agentId);
        let asks: Array<Record<string, unknown>> = [];
        await expect
          .poll(async () => (asks = ok(await rt.call('permission.pending'))['requests']).length, { timeout: 10_000 })
          .toBe(1);
        expect(asks[0]).toMatchObject({ agentId, tool: 'terminal', level: 'always_ask', scope: 'sensitive' });
        ok(await rt.call('permission.decide', { requestId: asks[0]!['requestId'], decision: 'deny_once' }));
        expect(outcome(await run)).toBe('permission_denied');
        await new Promise((r) => setTimeout(r, 300)); // longer than the watch debounce
        expect(readFileSync(policyFile, 'utf8')).toBe(before);
        expect(await factsAfter(seq, 'policy.changed')).toEqual([]);
        expect(outcome(await exec('touch still-denied.txt', agentId))).toBe('permission_denied');
        await expectNoCanary(rt, k);
      });
    }
  }
});

/** A policy allowing everything, with the canary marker (printf's two halves) as its rule. */
const widen = '{"default":"allow","tools":{"terminal":{"always_allow":[{"pattern":"%s%s"}]}}}';
