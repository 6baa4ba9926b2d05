import { createHash } from 'node:crypto';
import { linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Op, TABLES, closePlantedSocket } from './file-attacks.ts';
import { startNetworkedRuntime, type TestRuntime } from '../support/runtime.ts';

const SECRET = `CANARY-SECRET-${process.pid}-${Date.now()}`;
const PWNED = `CANARY-PWNED-${process.pid}`;

let rt: TestRuntime;
let dir: string;
let ws: string;
let outside: string;
let sibling: string;

/** Everything outside the workspace an attack could touch, as path → sha256 (a directory → 'dir'). */
function tree(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (p: string) => {
    // lstat: never follow the links the attacks plant (one points at /).
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) {
      out.set(p, 'dir');
      for (const e of readdirSync(p)) walk(join(p, e));
    } else if (st.isFile()) out.set(p, createHash('sha256').update(readFileSync(p)).digest('hex'));
    else out.set(p, st.isSymbolicLink() ? 'link' : 'special');
  };
  walk(root);
  return out;
}

function outsideState(): Map<string, string> {
  return new Map([...tree(outside), ...tree(sibling), ...tree(join(dir, 'data'))].filter(([p]) => !isLog(p)));
}

/** The runtime's own log files grow with every fact (they are compared by content elsewhere). */
function isLog(p: string): boolean {
  return p.includes(`${join(dir, 'data')}/`) && !p.endsWith('runtime.json');
}

function tempFiles(root: string): string[] {
  return [...tree(root).keys()].filter((p) => /\.skein-.*\.tmp$/.test(p));
}

async function attempt(op: Op, path: string): Promise<{ ok: boolean; text: string; code?: string }> {
  const reply =
    op === 'read'
      ? await rt.call('file.read', { path })
      : op === 'write'
        ? await rt.call('file.write', { path, content: `${PWNED}\n` })
        : op === 'edit'
          ? await rt.call('file.edit', { path, edits: [{ oldText: SECRET, newText: PWNED }] })
          : await rt.call('edit.begin', { path, mode: 'write' });
  const text = JSON.stringify(reply);
  return reply.ok ? { ok: true, text } : { ok: false, text, code: reply.error.code };
}

beforeAll(async () => {
  rt = await startNetworkedRuntime();
  dir = rt.dir;
  ws = rt.workspace;
  outside = join(dir, 'outside');
  sibling = join(dir, 'ws-evil');
  mkdirSync(join(outside, 'sub'), { recursive: true });
  mkdirSync(sibling, { recursive: true });
  writeFileSync(join(outside, 'secret.txt'), `${SECRET}\n`);
  writeFileSync(join(sibling, 'secret.txt'), `${SECRET}\n`);
}, 30_000);
afterAll(async () => {
  closePlantedSocket();
  await rt?.dispose();
});

/** Each attack gets a clean workspace (but for .skein) so plants never meet. */
beforeEach(() => {
  closePlantedSocket();
  for (const e of readdirSync(ws)) if (e !== '.skein') rmSync(join(ws, e), { recursive: true, force: true });
});

describe('hostile agent vs file tools (live over NATS)', () => {
  for (const [cls, attacks, ops] of TABLES) {
    describe(cls, () => {
      for (const a of attacks) {
        for (const op of ops) {
          it(`${op}: ${a.name}`, async () => {
            a.plant?.(ws, dir);
            const before = outsideState();
            const r = await attempt(op, a.path(ws, dir));
            // Canaries: the secret never comes back, nothing outside changes, no temp file anywhere.
            expect(r.text).not.toContain(SECRET);
            expect(outsideState()).toEqual(before);
            expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe(`${SECRET}\n`);
            expect(tempFiles(dir)).toEqual([]);
            expect(r.ok, r.text).toBe(false);
            expect(a.codes, r.text).toContain(r.code);
          });
        }
      }
    });
  }

  it.each([
    ['a created file', false],
    ['a modified file', true],
  ])(
    'review.reject after the agent swapped its directory for a symlink out never touches outside (%s)',
    async (_n, existed) => {
      mkdirSync(join(ws, 'swap'));
      if (existed) writeFileSync(join(ws, 'swap', 'victim.txt'), 'before\n');
      // The outside file matches what the agent wrote, so the review would act on it if it followed the link.
      writeFileSync(join(outside, 'victim.txt'), 'agent\n');
      expect((await rt.call('file.write', { path: 'swap/victim.txt', content: 'agent\n' })).ok).toBe(true);
      rmSync(join(ws, 'swap'), { recursive: true });
      symlinkSync(outside, join(ws, 'swap'));
      const before = outsideState();
      const r = await rt.call('review.reject', {});
      // Canary: the outside file with the same name is neither deleted nor restored over.
      expect(readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('agent\n');
      expect(outsideState()).toEqual(before);
      expect(tempFiles(dir)).toEqual([]);
      expect(r.ok, JSON.stringify(r)).toBe(false);
      rmSync(join(outside, 'victim.txt'));
      // Clear the log for the next case: accept what is left.
      await rt.call('review.accept', {});
    },
  );

  it('a refusal says why: the hard-link error names the link count and what to do', async () => {
    linkSync(join(outside, 'secret.txt'), join(ws, 'hl'));
    const r = await attempt('read', 'hl');
    expect(r.text).toMatch(/has 2 hard links, and a hard link can share its content with a file outside/);
  });

  it('a refusal says why: an over-long path names the field and the limit', async () => {
    const r = await attempt('write', 'a'.repeat(5000));
    expect(r.code).toBe('invalid_message');
    expect(r.text).toMatch(/path.*5000 bytes long, over the 4095-byte limit/);
  });

  it('still allows what is inside: files, subdirs, symlinks within the workspace', async () => {
    mkdirSync(join(ws, 'src'));
    writeFileSync(join(ws, 'src', 'a.ts'), 'export const a = 1;\n');
    symlinkSync('src/a.ts', join(ws, 'alias.ts'));
    symlinkSync('src', join(ws, 'srclink'));
    mkdirSync(join(ws, '..foo'));
    for (const p of ['src/a.ts', 'alias.ts', 'srclink/a.ts', `${ws}/src/a.ts`, 'src/../src/a.ts']) {
      const r = await attempt('read', p);
      expect(r.ok, r.text).toBe(true);
      expect(r.text).toContain('export const a = 1;');
    }
    // `..` is lexical: after a symlink it climbs the path as written, not the link's target.
    symlinkSync(join(outside, 'sub'), join(ws, 'deep'));
    for (const p of ['srclink/new.ts', '..foo/x.ts', 'src/b.ts', 'deep/../lexical.txt']) {
      const r = await rt.call('file.write', { path: p, content: 'ok\n' });
      expect(r.ok, JSON.stringify(r)).toBe(true);
    }
    expect(readFileSync(join(ws, 'src', 'new.ts'), 'utf8')).toBe('ok\n');
    expect(readFileSync(join(ws, '..foo', 'x.ts'), 'utf8')).toBe('ok\n');
    expect(readFileSync(join(ws, 'lexical.txt'), 'utf8')).toBe('ok\n');
    expect(readdirSync(join(outside, 'sub'))).toEqual([]);
    expect(tempFiles(dir)).toEqual([]);
  });
});
