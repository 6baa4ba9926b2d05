/**
 * An error quotes what the sender wrote (an unknown key, a record's key in a path, one issue per bad item), and
 * the host logs every refused command at warn. Before the cut, a 100 KB key came back in the reply and went
 * into the operator's log whole, and 5,000 bad items made an error as long as the body: an agent could write
 * the log full at its request rate. Each attack hides a canary past the cut; it must reach neither the reply
 * nor the log, and each error still names the field at fault.
 */
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { Reply } from '../../infra/transport/codec.ts';
import { ISSUE_CHARS, ISSUES_SHOWN } from '../../infra/transport/wire.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { attack, canary, type Canary, reportAttacks } from './support.ts';

/** An error's longest possible message: ISSUES_SHOWN issues cut at ISSUE_CHARS, the subject and the joints. */
const MAX_MESSAGE = ISSUES_SHOWN * (ISSUE_CHARS + 40) + 200;

let rt: TestRuntime;
let c: Canary;
let agentId: string;

beforeAll(async () => {
  rt = await startTestRuntime({ mode: 'embedded', logLevel: 'warn' });
  c = canary();
  ({ agentId } = ok(await rt.call('agent.spawn', { label: 'echo' })) as { agentId: string });
}, 60_000);
afterAll(async () => {
  c?.dispose();
  await rt?.dispose();
});
reportAttacks('error-echo');

/** Sends `data` as the agent; expects a refusal whose message names `field`, is short, and holds no canary. */
async function refused(type: string, data: unknown, field: RegExp): Promise<string> {
  const logBefore = JSON.stringify(rt.logs).length;
  const reply: Reply = await rt.call(type, data, { agentId });
  expect(reply.ok).toBe(false);
  if (reply.ok) return '';
  expect(reply.error.code).toBe('invalid_message');
  expect(reply.error.message).toMatch(field);
  expect(reply.error.message.length).toBeLessThan(MAX_MESSAGE);
  expect(reply.error.message).not.toContain(c.marker);
  const logged = JSON.stringify(rt.logs).slice(logBefore);
  expect(logged).toContain('command refused');
  expect(logged.length).toBeLessThan(2 * MAX_MESSAGE);
  expect(logged).not.toContain(c.marker);
  return reply.error.message;
}

/** A key or value of ~100 KB with the canary past the first 50 KB. */
const huge = () => `${'K'.repeat(50_000)}${c.marker}${'K'.repeat(50_000)}`;

describe('errors that quote the sender', () => {
  attack('log-flood', 'an unknown key of 100 KB', async () => {
    const message = await refused('terminal.open', { [huge()]: 1 }, /^Invalid message .*data: Unrecognized key/);
    expect(message).toMatch(/more characters\)/);
  });

  attack('log-flood', "a record's key of 100 KB (the path of the issue)", async () => {
    await refused('terminal.open', { env: { [huge()]: 5 } }, /data\.env\.KKKK/);
  });

  attack('log-flood', '5,000 bad items, one issue each', async () => {
    const edits = Array.from({ length: 5_000 }, (_, i) => ({ oldText: i, newText: c.marker }));
    const message = await refused('file.edit', { path: 'a.txt', edits }, /data\.edits\.0\./);
    expect(message).toMatch(/; and \d+ more issues$/);
  });

  attack('log-flood', 'the same 200 times over: the log grows by the cut lines only', async () => {
    const before = JSON.stringify(rt.logs).length;
    const body = { [huge()]: 1 };
    for (let i = 0; i < 200; i++) await rt.call('terminal.open', body, { agentId });
    const grown = JSON.stringify(rt.logs).length - before;
    expect(grown).toBeLessThan(200 * 2 * MAX_MESSAGE);
    expect(JSON.stringify(rt.logs)).not.toContain(c.marker);
  });
});
