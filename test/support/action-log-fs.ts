/**
 * @module
 * Real-file fixtures for action-log actor tests: a temp workspace and data
 * dir, a service whose emitted facts are collected, and a whole-tree reader
 * to compare workspaces byte for byte.
 */
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import type { UnstampedFact } from '../../schemas/message.ts';
import { ActionLogService } from '../../actors/action-log.ts';
import { BlobStore } from '../../actors/blob-store.ts';

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
  const service = new ActionLogService({ blobs, emit: async (f) => void facts.push(f) });
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
