/**
 * Hostile agent vs the file tools (issue 11, holes 6, 7, 8, 11; issue 10's sibling-prefix bug), live over
 * NATS against a real runtime on a private nats-server, with real files, symlinks, hard links and FIFOs.
 * The policy allows every tool, so only confinement stands between the agent and the host.
 *
 * Every attack has canaries that must never appear: the secret's content in a reply, a file created or
 * changed outside the workspace, a skein temp file left anywhere. Attacks are generated from tables:
 * traversal forms, symlinks in every position, hard links, long paths, NUL bytes, absolute paths, `..` after
 * symlinks, the data dir and its socket, device files, FIFOs and sockets.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startNetworkedRuntime, type TestRuntime } from '../support/runtime.ts';

const SECRET = `CANARY-SECRET-${process.pid}-${Date.now()}`;
const PWNED = `CANARY-PWNED-${process.pid}`;

type Op = 'read' | 'write' | 'edit' | 'begin';
type Attack = {
  name: string;
  /** Planted in the workspace before the attack (ws and the dir around it are given). */
  plant?: (ws: string, dir: string) => void;
  path: (ws: string, dir: string) => string;
  /** Error codes that count as a refusal (the attack must be refused). */
  codes: string[];
};

let rt: TestRuntime;
let dir: string;
let ws: string;
let outside: string;
let sibling: string;
let socketServer: Server;

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

const DENIED = ['permission_denied'];
const INVALID = ['invalid_message'];
const DENIED_OR_MISSING = ['permission_denied', 'not_found'];

/** Plants a symlink `name` in the workspace pointing at `target` (a function of ws and dir). */
const link =
  (name: string, target: (ws: string, dir: string) => string, mkdirs: string[] = []) =>
  (w: string, d: string) => {
    for (const m of mkdirs) mkdirSync(join(w, m), { recursive: true });
    symlinkSync(target(w, d), join(w, name));
  };

const TRAVERSAL: Attack[] = [
  ['../outside/secret.txt'],
  ['../outside/new.txt'],
  ['../../etc/passwd'],
  ['a/../../outside/secret.txt'],
  ['./../outside/secret.txt'],
  ['..//outside//secret.txt'],
  ['../ws-evil/x'],
  ['../ws-evil/secret.txt'],
  ['..'],
  ['../ws/../outside/secret.txt'],
].map(([p]) => ({ name: `traversal ${p}`, path: () => p!, codes: DENIED }));

const ABSOLUTE: Attack[] = [
  { name: 'absolute outside file', path: (_w, d) => join(d, 'outside', 'secret.txt'), codes: DENIED },
  { name: 'absolute sibling with the workspace as prefix', path: (_w, d) => join(d, 'ws-evil', 'x'), codes: DENIED },
  { name: 'absolute /etc/passwd', path: () => '/etc/passwd', codes: DENIED },
  { name: 'absolute /proc/self/environ', path: () => '/proc/self/environ', codes: DENIED },
  {
    name: 'absolute /proc/self/root into outside',
    path: (_w, d) => `/proc/self/root${d}/outside/secret.txt`,
    codes: DENIED,
  },
  { name: 'absolute ws/.. to outside', path: (w) => `${w}/../outside/secret.txt`, codes: DENIED },
];

const SYMLINKS: Attack[] = [
  {
    name: 'final component links to an outside file',
    plant: link('f', (_w, d) => join(d, 'outside', 'secret.txt')),
    path: () => 'f',
    codes: DENIED,
  },
  {
    name: 'first component links to the outside dir',
    plant: link('l', (_w, d) => join(d, 'outside')),
    path: () => 'l/secret.txt',
    codes: DENIED,
  },
  {
    name: 'first component links outside, new file',
    plant: link('l', (_w, d) => join(d, 'outside')),
    path: () => 'l/new.txt',
    codes: DENIED,
  },
  {
    name: 'middle component links outside',
    plant: link('a/l', (_w, d) => join(d, 'outside'), ['a']),
    path: () => 'a/l/secret.txt',
    codes: DENIED,
  },
  {
    name: 'deep component links outside',
    plant: link('a/b/c/l', (_w, d) => join(d, 'outside'), ['a/b/c']),
    path: () => 'a/b/c/l/new.txt',
    codes: DENIED,
  },
  {
    name: 'relative link climbing out',
    plant: link('up', () => '../outside'),
    path: () => 'up/secret.txt',
    codes: DENIED,
  },
  {
    name: 'relative link climbing out from a subdir',
    plant: link('a/up', () => '../../outside', ['a']),
    path: () => 'a/up/new.txt',
    codes: DENIED,
  },
  {
    name: 'link to the sibling whose name extends the workspace',
    plant: link('ev', () => '../ws-evil'),
    path: () => 'ev/x',
    codes: DENIED,
  },
  {
    name: 'chain of links ending outside',
    plant: (w, d) => {
      symlinkSync(join(d, 'outside'), join(w, 'l2'));
      symlinkSync('l2', join(w, 'l1'));
    },
    path: () => 'l1/secret.txt',
    codes: DENIED,
  },
  { name: 'link to /', plant: link('root', () => '/'), path: (_w, d) => `root${d}/outside/secret.txt`, codes: DENIED },
  {
    name: 'link to the workspace parent',
    plant: link('parent', () => '..'),
    path: () => 'parent/outside/secret.txt',
    codes: DENIED,
  },
  {
    name: '.. after a symlink that points deeper',
    plant: link('deep', (_w, d) => join(d, 'outside', 'sub')),
    path: () => 'deep/../../secret.txt',
    codes: DENIED,
  },
  {
    name: 'link whose target is ./.. twice',
    plant: link('dots', () => './../../'),
    path: (_w, d) => `dots${d}/outside/secret.txt`,
    codes: DENIED,
  },
  {
    name: 'dangling link to a new outside file',
    plant: link('dl', (_w, d) => join(d, 'outside', 'created-by-link.txt')),
    path: () => 'dl',
    codes: DENIED,
  },
  {
    name: 'link inside the workspace to an outside link',
    plant: (w, d) => {
      symlinkSync(join(d, 'outside', 'secret.txt'), join(w, 'x1'));
      mkdirSync(join(w, 'in'));
      symlinkSync('../x1', join(w, 'in', 'x2'));
    },
    path: () => 'in/x2',
    codes: DENIED,
  },
  {
    name: 'link loop',
    plant: (w) => {
      symlinkSync('loop2', join(w, 'loop1'));
      symlinkSync('loop1', join(w, 'loop2'));
    },
    path: () => 'loop1/x',
    codes: INVALID,
  },
  { name: 'link into /proc/self/fd', plant: link('fdl', () => '/proc/self/fd'), path: () => 'fdl/0', codes: DENIED },
];

const HARD_LINKS: Attack[] = [
  {
    name: 'hard link to an outside file',
    plant: (w, d) => linkSync(join(d, 'outside', 'secret.txt'), join(w, 'hl')),
    path: () => 'hl',
    codes: DENIED,
  },
  {
    name: 'hard link in a subdir',
    plant: (w, d) => {
      mkdirSync(join(w, 's'));
      linkSync(join(d, 'outside', 'secret.txt'), join(w, 's', 'hl'));
    },
    path: () => 's/hl',
    codes: DENIED,
  },
  {
    name: 'hard link reached through an inside symlink',
    plant: (w, d) => {
      linkSync(join(d, 'outside', 'secret.txt'), join(w, 'hl2'));
      symlinkSync('hl2', join(w, 'via'));
    },
    path: () => 'via',
    codes: DENIED,
  },
];

const LIMITS: Attack[] = [
  { name: 'path of 5000 a', path: () => 'a'.repeat(5000), codes: INVALID },
  { name: 'component of 256 bytes', path: () => `d/${'b'.repeat(256)}`, codes: INVALID },
  { name: 'component of 128 two-byte characters (256 bytes)', path: () => 'é'.repeat(128), codes: INVALID },
  { name: 'path of 2100 a/ components', path: () => 'a/'.repeat(2100), codes: INVALID },
  { name: 'NUL byte then a traversal', path: () => 'ok.txt\0../../outside/secret.txt', codes: INVALID },
  { name: 'NUL byte alone', path: () => '\0', codes: INVALID },
  { name: 'empty path', path: () => '', codes: INVALID },
];

const SPECIAL: Attack[] = [
  { name: 'absolute /dev/zero', path: () => '/dev/zero', codes: DENIED },
  { name: 'link to /dev/zero', plant: link('z', () => '/dev/zero'), path: () => 'z', codes: DENIED },
  { name: 'link to /dev/tty', plant: link('tty', () => '/dev/tty'), path: () => 'tty', codes: DENIED },
  {
    name: 'FIFO in the workspace',
    plant: (w) => execFileSync('mkfifo', [join(w, 'fifo')]),
    path: () => 'fifo',
    codes: INVALID,
  },
  {
    name: 'unix socket in the workspace',
    plant: (w) => {
      socketServer = createServer();
      socketServer.listen(join(w, 'sock'));
    },
    path: () => 'sock',
    codes: INVALID,
  },
  { name: 'the workspace root itself', path: () => '.', codes: INVALID },
];

const DATA_DIR: Attack[] = [
  { name: 'absolute data dir runtime.json', path: (_w, d) => join(d, 'data', 'runtime.json'), codes: DENIED },
  { name: 'relative data dir', path: () => '../data/runtime.json', codes: DENIED },
  {
    name: 'link to the data dir',
    plant: link('dd', (_w, d) => join(d, 'data')),
    path: () => 'dd/runtime.json',
    codes: DENIED,
  },
  {
    name: 'link to the data dir, new file',
    plant: link('dd', (_w, d) => join(d, 'data')),
    path: () => 'dd/events.jsonl',
    codes: DENIED,
  },
  {
    name: 'link to the data dir jetstream store',
    plant: link('js', (_w, d) => join(d, 'data')),
    path: () => 'js/jetstream/x',
    codes: DENIED_OR_MISSING,
  },
];

const TABLES: Array<[string, Attack[], Op[]]> = [
  ['traversal', TRAVERSAL, ['read', 'write']],
  ['absolute', ABSOLUTE, ['read', 'write']],
  ['symlink', SYMLINKS, ['read', 'write']],
  ['hard link', HARD_LINKS, ['read', 'write', 'edit']],
  ['length/NUL', LIMITS, ['read', 'write', 'begin']],
  ['special file', SPECIAL, ['read', 'write']],
  ['data dir', DATA_DIR, ['read', 'write']],
];

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
  socketServer?.close();
  await rt?.dispose();
});

/** Each attack gets a clean workspace (but for .skein) so plants never meet. */
beforeEach(() => {
  socketServer?.close();
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
