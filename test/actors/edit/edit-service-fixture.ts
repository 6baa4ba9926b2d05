/**
 * The fixture of the EditService integration tests (`edit-service*.integration.test.ts`): a fresh workspace
 * and service per test, the facts it emitted, and helpers. The bindings are live: each test sees the
 * values its beforeEach set.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { EditService } from '../../../actors/edit/edit-service.ts';
import type { EditFact } from '../../../schemas/edit.ts';
import { editEvents } from '../../../schemas/edit.ts';
import { RuntimeError } from '../../../schemas/errors.ts';

export let dir: string;
export let ws: string;
export let facts: EditFact[];
export let bases: Map<string, Buffer>;
export let service: EditService;
export const ctx = () => ({ agentId: 'a1', emit: async (f: EditFact) => void facts.push(f) });
export const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
export const file = (name: string) => join(ws, name);

/** Checks every fact against its schema (the log would refuse anything else). */
export function validated(): EditFact[] {
  for (const f of facts) {
    const def = editEvents.find((e) => e.type === f.type)!;
    def.data.parse(f.data);
  }
  return facts;
}

export async function failure(p: Promise<unknown>): Promise<RuntimeError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof RuntimeError) return err;
    throw err;
  }
  throw new Error('expected a failure');
}

/** Registers the per-test workspace and service (call at the top of each test file). */
export function useEditService(): void {
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skein-edit-svc-'));
    ws = join(dir, 'ws');
    mkdirSync(ws);
    facts = [];
    bases = new Map();
    service = new EditService({
      workspaceRoots: { a1: [ws] },
      maxFileBytes: 1_000_000,
      storeBlob: (h, b) => void bases.set(h, b),
    });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
}
