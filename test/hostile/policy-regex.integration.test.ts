/**
 * Hostile agents against the operator's own patterns, live over NATS with a real terminal: a rule that
 * JavaScript's regex engine backtracks on (exponential `^(\w+\s?)*$`, quadratic `\s+--force`) turned any
 * command the agent wrote into an event-loop stall for every agent on the host (`node -e`, 1 December:
 * 26 letters and a '!' 2 s for the exponential one and doubling per letter; 32,000 spaces 1 s for the
 * quadratic one, and the gate matches a command in several forms). Such rules are now refused when the
 * policy is compiled, so the tool denies naming them and the attack text never reaches a regex. While
 * each attack runs, pings must keep being answered; the canary must never appear.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestRuntime } from '../support/runtime.ts';
import {
  attack,
  canary,
  cliVerdict,
  expectNoCanary,
  hostileRuntime,
  openTerminal,
  reportAttacks,
  type Canary,
} from './support.ts';

const EXPONENTIAL = '^(\\w+\\s?)*$';
const QUADRATIC = '\\s+--force';
const POLICY = {
  default: 'deny',
  tools: {
    terminal: { always_allow: [{ pattern: EXPONENTIAL }], always_confirm: [{ pattern: QUADRATIC }] },
    read_file: { always_allow: [{ pattern: '^notes\\.txt$' }] },
  },
};

let rt: TestRuntime;
let terminalId: string;
const canaries: Canary[] = [];

beforeAll(async () => {
  rt = await hostileRuntime(POLICY);
  writeFileSync(join(rt.workspace, 'notes.txt'), 'notes\n');
  terminalId = await openTerminal(rt);
}, 60_000);
afterAll(async () => {
  await rt?.dispose();
  for (const c of canaries) c.dispose();
});
reportAttacks('policy-regex');

/** Runs `command` while pinging the runtime; returns the exec reply and how many pings were answered. */
async function execWhilePinging(command: string): Promise<{ reply: Awaited<ReturnType<TestRuntime['call']>> }> {
  let done = false;
  let pings = 0;
  const pinger = (async () => {
    while (!done) {
      const pong = await rt.call('runtime.ping', {});
      expect(pong.ok).toBe(true);
      pings++;
    }
  })();
  const reply = await rt.call('terminal.exec', { terminalId, command, timeoutMs: 10_000 });
  done = true;
  await pinger;
  expect(pings).toBeGreaterThan(0);
  return { reply };
}

/** Runs `attack(canaryPath)` while pinging: it must be denied naming `refusal`, and the canary never appear. */
async function deniedNaming(attack: (path: string) => string, refusal: string): Promise<void> {
  const c = canary(rt.workspace);
  canaries.push(c);
  const { reply } = await execWhilePinging(attack(c.path));
  expect(reply.ok).toBe(false);
  if (reply.ok) return;
  expect(reply.error.code).toBe('permission_denied');
  expect(reply.error.message).toContain(refusal);
  await expectNoCanary(rt, c);
}

attack('regex', 'an exponential allow rule against 40 letters and a canary', async () => {
  // Old code: the allow rule ran against this text for 2^40 steps, with the runtime's event loop held.
  await deniedNaming((path) => `${'a'.repeat(40)}!; touch ${path}`, `"${EXPONENTIAL}" (can take exponential time`);
});

attack('regex', 'a quadratic confirm rule against 64,000 spaces', async () => {
  await deniedNaming((path) => `echo${' '.repeat(64_000)}x; touch ${path}`, `"${QUADRATIC}" (can take polynomial time`);
});

attack('regex', '`skein policy check` gives the same verdict, and other tools keep their rules', async () => {
  expect(await cliVerdict(rt, 'terminal', 'ls')).toBe('deny');
  const read = await rt.call('file.read', { path: 'notes.txt' });
  expect(read.ok).toBe(true);
  expect((await rt.call('file.read', { path: 'other.txt' })).ok).toBe(false);
});
