/**
 * A write lands in the file it was judged for, live, while a shell loop swaps a directory on its way for a
 * symlink into .skein/ and back. A review helper's attack: the policy allows writes to `d/policy.json`, and a
 * swap between the judgment and the write put the agent's content in `.skein/policy.json`, the project policy,
 * which reloads live (the streamed edit won on its 2nd try, the one-shot write on its 5th). The canary is the
 * marker in the project policy.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Reply } from '../../infra/transport/codec.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const TRIES = 20;
const CONTENT = '{"default":"allow","CANARY":1}';

describe('hostile: a directory swapped for a link into .skein/ while a write runs', () => {
  let rt: TestRuntime;
  const at = (name: string) => join(rt.workspace, name);
  const projectPolicy = () => readFileSync(at('.skein/policy.json'), 'utf8');

  beforeAll(async () => {
    rt = await startTestRuntime({ mode: 'embedded', policy: { default: 'allow' } });
  }, 60_000);
  afterAll(async () => {
    await rt?.dispose();
  });

  /**
   * A fresh directory `d`. Retried when not empty: a write the last try gave up on (its client timed out) may still
   * land in `d` while it is removed (CI, under load).
   */
  const freshD = () => {
    rmSync(at('d'), { recursive: true, force: true, maxRetries: 10 });
    rmSync(at('d.real'), { recursive: true, force: true, maxRetries: 10 });
    mkdirSync(at('d'));
  };
  /** Runs `write` while `d` flips between the directory and a link to .skein; puts `d` back after. */
  async function swapping(write: () => Promise<Reply>): Promise<Reply> {
    const swapper: ChildProcess = spawn(
      'bash',
      ['-c', 'cd "$0"; while :; do mv d d.real; ln -s .skein d; rm d; mv d.real d; done', rt.workspace],
      { stdio: 'ignore' },
    );
    await new Promise((r) => setTimeout(r, 5));
    try {
      return await write();
    } finally {
      swapper.kill('SIGKILL');
      await new Promise((r) => setTimeout(r, 30));
      if (existsSync(at('d')) && lstatSync(at('d')).isSymbolicLink()) rmSync(at('d'));
      if (!existsSync(at('d')) && existsSync(at('d.real'))) renameSync(at('d.real'), at('d'));
    }
  }

  it('a streamed write finished during the swaps never reaches .skein/policy.json', async () => {
    let written = 0;
    for (let i = 0; i < TRIES; i++) {
      freshD();
      const begun = await rt.call('edit.begin', { path: 'd/policy.json', mode: 'write' });
      if (!begun.ok) continue;
      const editId = String(begun['editId']);
      ok(await rt.call('edit.input', { editId, chunk: JSON.stringify({ content: CONTENT }) }));
      // As below: a swap the gate sees at the finish's judgment asks a person; nobody answers, the call gives up.
      const r = await swapping(() =>
        rt.call('edit.finish', { editId }, { timeoutMs: 1000 }).catch(() => ({ ok: false }) as Reply),
      );
      if (r.ok) written++;
      expect(projectPolicy()).not.toContain('CANARY');
    }
    console.log(`folder-swap streamed: ${written} of ${TRIES} written (to d/), none to .skein/`);
  }, 120_000);

  it('a one-shot write during the swaps never reaches .skein/policy.json', async () => {
    let written = 0;
    for (let i = 0; i < TRIES; i++) {
      freshD();
      // A swap the gate sees asks a person (the policy file is sensitive): nobody answers, the call gives up.
      const r = await swapping(() =>
        rt
          .call('file.write', { path: 'd/policy.json', content: CONTENT }, { timeoutMs: 500 })
          .catch(() => ({ ok: false }) as Reply),
      );
      if (r.ok) written++;
      expect(projectPolicy()).not.toContain('CANARY');
    }
    console.log(`folder-swap one-shot: ${written} of ${TRIES} written (to d/), none to .skein/`);
  }, 120_000);

  it('without the swaps both writes land in d/', async () => {
    freshD();
    ok(await rt.call('file.write', { path: 'd/policy.json', content: CONTENT }));
    expect(readFileSync(at('d/policy.json'), 'utf8')).toBe(CONTENT);
    expect(projectPolicy()).not.toContain('CANARY');
  });
});
