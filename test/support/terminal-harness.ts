/**
 * @module
 * A TerminalManager on real PTYs with in-memory emit/emitOutput that record
 * every fact, a silent logger, and a temporary workspace removed afterwards.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { z } from 'zod';
import { createLogger } from '../../infra/kernel/log.ts';
import type { TerminalConfig } from '../../schemas/terminal.ts';
import { TerminalManager } from '../../actors/terminal/terminal-manager.ts';
import type { OutputFact } from '../../actors/terminal/terminal-output.ts';

export type RecordedFact = { type: string; data: any; agentId?: string };

export function terminalHarness(
  config: z.input<typeof TerminalConfig> = {},
  options: { spawnHelper?: boolean; lineage?: (agentId: string) => readonly string[] } = {},
) {
  const facts: RecordedFact[] = [];
  const output: OutputFact[] = [];
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'skein-term-')));
  const log = createLogger({
    level: process.env.SKEIN_TEST_LOG === '1' ? 'debug' : 'silent',
    destination: { write: (l: string) => process.stderr.write(l) },
  });
  const manager = new TerminalManager({
    config,
    log,
    ...options,
    emit: async (fact) => {
      facts.push(fact);
    },
    emitOutput: async (fact) => {
      output.push(fact);
    },
  });
  return {
    manager,
    facts,
    output,
    workspace,
    /** Facts of one terminal (events stream), in order. */
    factsOf: (terminalId: string) => facts.filter((f) => f.data?.terminalId === terminalId),
    types: (terminalId: string) => facts.filter((f) => f.data?.terminalId === terminalId).map((f) => f.type),
    /** The output stream of a terminal, reassembled. */
    rawOutput: (terminalId: string) =>
      output
        .filter((f) => f.data.terminalId === terminalId)
        .map((f) => f.data.data)
        .join(''),
    open: (agentId = 'a1', data: Record<string, unknown> = {}) =>
      manager.open(agentId, { cwd: workspace, ...data }, { workspace }),
    async dispose() {
      await manager.shutdown();
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}

/**
 * A fresh harness for each test of the file (made before it, disposed after it): call at the top of a file and use
 * the returned function for the current test's harness.
 */
export function harnessPerTest(
  options: Parameters<typeof terminalHarness>[0],
): () => ReturnType<typeof terminalHarness> {
  let h: ReturnType<typeof terminalHarness> | undefined;
  beforeEach(() => {
    h = terminalHarness(options);
  });
  afterEach(async () => {
    await h?.dispose();
  });
  return () => h!;
}
