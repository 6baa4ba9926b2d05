/**
 * @module
 * Real-file fixtures for action-log actor tests: a temp workspace and data
 * dir, a service whose emitted facts are collected, and a whole-tree reader
 * to compare workspaces byte for byte.
 */
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import type { EventDef, UnstampedFact } from '../../schemas/message.ts';
import { reviewEvents } from '../../schemas/review.ts';
import { ActionLogService } from '../../actors/review/action-log.ts';
import { BlobStore } from '../../actors/review/blob-store.ts';

export type Fixture = {
  root: string;
  ws: string;
  data: string;
  blobs: BlobStore;
  facts: UnstampedFact[];
  service: ActionLogService;
  p: (rel: string) => string;
  write: (rel: string, content: string) => void;
  read: (rel: string) => string | null;
  tree: () => Record<string, string>;
  cleanup: () => void;
};

export function makeFixture(): Fixture {
  const root = mkdtempSync(join(tmpdir(), 'skein-al-'));
  const ws = join(root, 'ws');
  const data = join(root, 'data');
  mkdirSync(ws, { recursive: true });
  const blobs = new BlobStore(join(data, 'blobs'));
  const facts: UnstampedFact[] = [];
  // Every emitted fact must be valid against its schema and published under the log's agent id.
  const emit = async (f: UnstampedFact) => {
    const def = reviewEvents.find((e) => e.type === f.type) as EventDef | undefined;
    if (!def) throw new Error(`unknown fact type '${f.type}'`);
    const data = def.data.parse(f.data);
    if (def.aggregateId(data) !== f.agentId)
      throw new Error(`fact ${f.type} for log '${def.aggregateId(data)}' emitted under '${f.agentId}'`);
    facts.push(f);
  };
  const service = new ActionLogService({ blobs, emit });
  const p = (rel: string) => join(ws, rel);
  return {
    root,
    ws,
    data,
    blobs,
    facts,
    service,
    p,
    write: (rel, content) => {
      mkdirSync(dirname(p(rel)), { recursive: true });
      writeFileSync(p(rel), content);
    },
    read: (rel) => {
      try {
        return readFileSync(p(rel), 'utf8');
      } catch {
        return null;
      }
    },
    tree: () => readTree(ws),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Every file under `dir` (relative path → content); directories are implied. */
export function readTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else out[relative(dir, full)] = readFileSync(full, 'latin1');
    }
  };
  walk(dir);
  return out;
}

/** Writes `before` (unless null), then `after` at `rel` in the workspace, and records it as main's write. */
export async function recordWrite(
  f: Fixture,
  service: ActionLogService,
  rel: string,
  before: string | null,
  after: string,
): Promise<void> {
  if (before !== null) f.write(rel, before);
  f.write(rel, after);
  await service.recordChange({
    agentId: 'main',
    ancestors: [],
    path: f.p(rel),
    before,
    after,
    source: { kind: 'write' },
  });
}
