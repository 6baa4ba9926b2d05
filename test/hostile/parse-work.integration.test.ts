/**
 * An agent makes the host's tree-sitter work hold it, or fail open. tree-sitter parses on the host's thread: a
 * `file.read` of a big file outlines it, and a few megabytes of nested brackets held the host's event loop for
 * 5.6 s per read (now the parse is given up at `OUTLINE_PARSE_MS`). The gate parses every command and walks the
 * tree recursively: 16,000 nested `$(`, within the command length limit, overflowed the stack and the command
 * failed as an internal error, and its split held 88 MB (each nested command repeats the text around it); now the
 * split is bounded and unparseable (no policy with a deny rule allows it; this allow-all one asks a person, and
 * the ask's fact fits a message). The canaries: the host stalled for seconds, the innermost command run (its
 * marker printed), an internal error, an ask never recorded.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { OUTLINE_PARSE_MS } from '../../actors/edit/syntax.ts';
import type { TestRuntime } from '../support/runtime.ts';
import {
  attack,
  type Canary,
  canary,
  expectNoCanary,
  hostileRuntime,
  openTerminal,
  reportAttacks,
  runtimeVerdict,
  settle,
  stallOf,
} from './support.ts';

/** Longest the host's event loop may stall on one read (unbounded: 5.6 s here, more on a slower machine). */
const MAX_STALL_MS = 2_500;

let rt: TestRuntime;
let c: Canary;

beforeAll(async () => {
  rt = await hostileRuntime({ default: 'allow' });
  c = canary(rt.workspace);
  // ~7.8 MB of brackets the JavaScript grammar recovers from slowly: an agent writes it with one command.
  writeFileSync(join(rt.workspace, 'nested.js'), `${'function f() { if (a) { [ '.repeat(100)}\n`.repeat(3_000));
}, 60_000);
afterAll(async () => {
  c?.dispose();
  await rt?.dispose();
});
reportAttacks('parse-work');

describe('hostile: parses that hold the host or fail open', { timeout: 120_000 }, () => {
  attack(
    'outline',
    `file.read of 7.8 MB of nested brackets: the outline's parse is given up at ${OUTLINE_PARSE_MS} ms`,
    async () => {
      const { value, stallMs } = await stallOf(() =>
        rt.call('file.read', { path: 'nested.js' }, { timeoutMs: 60_000 }),
      );
      console.log(`outline: host stalled ${stallMs.toFixed(0)} ms`);
      // No outline: the read answers with its first lines (here more than a message may carry).
      expect(value.ok ? 'ok' : value.error.code).toMatch(/^(ok|payload_too_large)$/);
      if (value.ok) expect(value['outline']).toBeUndefined();
      expect(stallMs).toBeLessThan(MAX_STALL_MS);
    },
    120_000,
  );

  attack(
    'deep-substitution',
    '16,000 nested $( around a command that prints a marker: asked of a person and recorded, never run',
    async () => {
      const terminalId = await openTerminal(rt);
      const inner = `printf %s%s ${c.halves[0]} ${c.halves[1]} > ${c.path}`;
      const command = `${'$('.repeat(16_000)}${inner}${')'.repeat(16_000)}`;
      const before = await rt.log.lastSeq('events');
      // Under this allow-all policy a command the gate cannot judge is asked of a person; nobody answers here.
      const reply = await rt
        .call('terminal.exec', { terminalId, command }, { timeoutMs: 3_000 })
        .catch(() => undefined);
      if (reply) console.log(`deep-substitution: replied ${JSON.stringify(reply).slice(0, 200)}`);
      expect(reply?.ok ?? false).toBe(false);
      if (reply && !reply.ok) expect(reply.error.code).not.toBe('internal');
      const asked: string[] = [];
      await rt.log.scan({ stream: 'events', fromSeq: before + 1 }, (f) => {
        if (f.type === 'permission.requested') asked.push(JSON.stringify(f.data));
      });
      expect(asked.length).toBe(1);
      // The ask is recorded whole: before, its sub-commands (each nested one repeats the text around it) made the
      // fact pass the broker's 1 MiB message limit, and its append failed.
      console.log(`deep-substitution: asked, the fact's data ${asked[0]!.length} characters`);
      expect(asked[0]!.length).toBeLessThan(2 * command.length + 200_000);
      await settle(500);
      await expectNoCanary(rt, c);
      // The terminal still runs what it may.
      expect(await runtimeVerdict(rt, await openTerminal(rt), 'terminal', 'echo still-here')).toBe('allow');
    },
    120_000,
  );
});
