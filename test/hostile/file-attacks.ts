/**
 * The attack tables of the hostile file-tool suite (`files.integration.test.ts`): each attack plants what it
 * needs in the workspace (or around it) and names the path an agent then tries, with the error codes that
 * count as a refusal. Traversal forms, absolute paths, symlinks in every position, hard links, length and
 * NUL limits, special files, and the data dir.
 */
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';

export type Op = 'read' | 'write' | 'edit' | 'begin';
export type Attack = {
  name: string;
  /** Planted in the workspace before the attack (ws and the dir around it are given). */
  plant?: (ws: string, dir: string) => void;
  path: (ws: string, dir: string) => string;
  /** Error codes that count as a refusal (the attack must be refused). */
  codes: string[];
};

let socketServer: Server | undefined;

/** Closes the unix socket the 'special file' table plants (called before each attack and at the end). */
export function closePlantedSocket(): void {
  socketServer?.close();
  socketServer = undefined;
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
  // Written as U+FFFD on disk, recorded as sent: every later call on it was refused as "now leads to …".
  { name: 'lone high surrogate', path: () => 's\ud800.txt', codes: INVALID },
  { name: 'lone low surrogate in a directory', path: () => '\udc00d/x.txt', codes: INVALID },
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

export const TABLES: Array<[string, Attack[], Op[]]> = [
  ['traversal', TRAVERSAL, ['read', 'write']],
  ['absolute', ABSOLUTE, ['read', 'write']],
  ['symlink', SYMLINKS, ['read', 'write']],
  ['hard link', HARD_LINKS, ['read', 'write', 'edit']],
  ['length/NUL', LIMITS, ['read', 'write', 'begin']],
  ['special file', SPECIAL, ['read', 'write']],
  ['data dir', DATA_DIR, ['read', 'write']],
];
