/**
 * The detail of an ask (a write's content) reaches whoever answers, in the
 * logged `permission.requested` and in `permission.pending`, bounded so a
 * huge write cannot bloat the log; it is shown, never judged.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../../infra/transport/client.ts';
import { ok } from '../../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';

describe('ask detail', () => {
  let rt: TestRuntime;
  beforeAll(async () => {
    rt = await startTestRuntime({
      mode: 'embedded',
      policy: { default: 'allow', tools: { write_file: { default: 'confirm' } } },
    });
  });
  afterAll(async () => rt?.dispose());

  async function pendingFor(path: string, content: string) {
    const write = call(rt.bus, 'main', 'file.write', { path, content }, { timeoutMs: 30_000 });
    let requests: Array<Record<string, unknown>> = [];
    await expect
      .poll(async () => (requests = ok(await rt.call('permission.pending'))['requests']).length, { timeout: 15_000 })
      .toBe(1);
    const [request] = requests;
    ok(await rt.call('permission.decide', { requestId: request!['requestId'], decision: 'deny_once' }));
    expect(await write).toMatchObject({ ok: false });
    return request!;
  }

  it("carries a write's exact content", async () => {
    const request = await pendingFor('small.md', 'line one\nline two\n');
    expect(request).toMatchObject({ tool: 'write_file', input: 'small.md', detail: 'line one\nline two\n' });
    const logged: unknown[] = [];
    for await (const f of rt.log.read({ stream: 'events' })) {
      if (f.type === 'permission.requested') logged.push((f.data as { detail?: string }).detail);
    }
    expect(logged).toEqual(['line one\nline two\n']);
  });

  it('cuts a huge content at 16384 characters and says how much is not shown', async () => {
    const request = await pendingFor('big.md', 'x'.repeat(20_000));
    expect(request['detail']).toBe(`${'x'.repeat(16_384)}\n… (3616 more characters not shown)`);
  });
});

describe('ask detail of a command', () => {
  let rt: TestRuntime;
  beforeAll(async () => {
    rt = await startTestRuntime({
      mode: 'embedded',
      policy: { default: 'allow', tools: { terminal: { default: 'confirm' } } },
    });
  });
  afterAll(async () => rt?.dispose());

  it('names the directory the shell is in: `rm -rf build` means something else elsewhere', async () => {
    const terminalId = String(ok(await rt.call('terminal.open', {}))['terminalId']);
    const exec = (command: string) =>
      call(rt.bus, 'main', 'terminal.exec', { terminalId, command }, { timeoutMs: 30_000 });
    const asked = async (command: string, decision: string) => {
      const reply = exec(command);
      let requests: Array<Record<string, unknown>> = [];
      await expect
        .poll(async () => (requests = ok(await rt.call('permission.pending'))['requests']).length, { timeout: 15_000 })
        .toBe(1);
      ok(await rt.call('permission.decide', { requestId: requests[0]!['requestId'], decision }));
      await reply;
      return requests[0]!;
    };
    mkdirSync(join(rt.workspace, 'sub'));
    expect((await asked('cd sub', 'allow_once'))['detail']).toBe(`shell directory: ${realpathSync(rt.workspace)}`);
    expect(await asked('rm -rf build', 'deny_once')).toMatchObject({
      input: 'rm -rf build',
      detail: `shell directory: ${realpathSync(join(rt.workspace, 'sub'))}`,
    });
  });
});
