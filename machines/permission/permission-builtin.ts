/**
 * @module
 * Built-in rules: host-destroying commands no policy or approval can allow.
 * Checked first, on every sub-command of a terminal input (wrappers and
 * `bash -c` scripts included):
 * - `rm` of `/`, `~`, `~user`, `$HOME`, `.`, `..` (or only-`..` paths), or a
 *   glob directly in one of those, in any flag order, with `--`, several
 *   operands, and lexically normalized paths (`/tmp/../..`, `//`, `$HOME/x/..`);
 * - recursive `chmod`/`chown`/`chgrp` of the same targets;
 * - `find` rooted at `/` or `~` (after find's `-H`/`-L`/`-P`/`-D`/`-O` options) whose only action is
 *   `-delete` or `-exec rm -rf {} +` (beside grouping, `-print`, options and `-exec`s that do not name `{}`);
 * - `mkfs*`, `mkswap`, `wipefs`, `blkdiscard`, `shred` on a disk device (or a udev link to one,
 *   `/dev/disk/by-id/…`), the path read lexically (`/dev/../dev/sda`);
 *   `dd of=/dev/<disk>`; any redirect into a disk device;
 * - fork bombs (`:(){ :|:& };:` and renamed variants, also behind quotes and `$'…'` escapes);
 * - `kill -1` / `kill -9 -1` (every process of the user).
 */
import type { ShellSplit } from './shell-words.ts';
import { clip } from './permission-decision.ts';

export const BUILTIN_DENY_SUFFIX =
  'This operation is considered too harmful to be allowed, and cannot be overridden by settings or approvals.';

/** The first built-in rule the input breaks, as a denial reason; undefined when none. */
export function builtinDenial(raw: string, split: ShellSplit): string | undefined {
  // The raw text, and each command's canonical text: quotes spliced or ANSI-C escapes (`bash -c ':()'{' :|:& };:'`,
  // `$'…\x20…'`) hide the body from the raw text only.
  const texts = [raw, ...split.commands.map((c) => c.text)];
  if (texts.some((t) => isForkBomb(t.replace(/\s+/g, ' ')))) return deny(`"${clip(raw)}" is a fork bomb`);
  if (split.forkBomb) return deny(`"${clip(raw)}" is a fork bomb: ${split.forkBomb}`);
  for (const c of split.commands) {
    if (c.kind === 'redirect') {
      const target = c.text.replace(/^\S+\s+/, '');
      if (isDiskDevice(target)) return deny(`"${c.text}" would overwrite the disk device ${target}`);
      continue;
    }
    if (c.kind !== 'command' || c.argv.length === 0) continue;
    const reason = commandDenial(c.argv);
    if (reason) return deny(`"${clip(c.text)}" ${reason}`);
  }
  return undefined;
}

function deny(what: string): string {
  return `Blocked by built-in security rule: ${what}. ${BUILTIN_DENY_SUFFIX}`;
}

/** A fork bomb's body, `{ name|name& }`; its definition is checked in front of it (`isForkBomb`). */
const FORK_BODY = /\{ ?([^\s(){}|&;]+) ?\| ?\1 ?&? ?;? ?\}/g;

/**
 * `name(){ name|name& };name` with any function name, optional `function` keyword (spaces already single).
 * The body is found first and the name then checked in front of it: one regex with the name first,
 * unanchored, tried every length of every long word at every start (a 16 KB word took 2.8 s of the host's
 * loop, 100 KB, the largest exec, about 100 s); a body starts at a `{`, which ends the name before it.
 */
function isForkBomb(text: string): boolean {
  for (const m of text.matchAll(FORK_BODY)) {
    // Enough in front for `name ( ) ` (spaces are single): a window, not all the text, keeps it linear.
    let before = text.slice(Math.max(0, m.index - m[1]!.length - 6), m.index).trimEnd();
    if (before.endsWith(')')) {
      before = before.slice(0, -1).trimEnd();
      if (!before.endsWith('(')) continue;
      before = before.slice(0, -1).trimEnd();
    }
    if (before.endsWith(m[1]!)) return true;
  }
  return false;
}

function commandDenial(argv: string[]): string | undefined {
  const name = argv[0]!.toLowerCase();
  const args = argv.slice(1);
  if (name === 'rm') {
    const target = operands(args).find(isProtectedTarget);
    return target === undefined ? undefined : `would delete ${describeTarget(target)}`;
  }
  if (name === 'chmod' || name === 'chown' || name === 'chgrp') {
    const recursive = args.some((a) => a === '--recursive' || /^-[a-zA-Z]*R/.test(a));
    const target = recursive ? operands(args).find(isProtectedTarget) : undefined;
    return target === undefined ? undefined : `would recursively change ${describeTarget(target)}`;
  }
  if (name === 'find') {
    const { starts, expression } = findArgs(args);
    const rest = execRmAsDelete(expression);
    const harmlessOnly = rest.every((a) => FIND_HARMLESS.has(a) || /^\d+$/.test(a));
    const root = starts.find((s) => isProtectedTarget(s) && !/^\.\.?$/.test(normalizeTarget(s)));
    if (rest.includes('-delete') && harmlessOnly && root !== undefined)
      return `would delete everything under ${describeTarget(root)}`;
    return undefined;
  }
  if (/^mkfs(\..+)?$/.test(name) || ['mke2fs', 'mkswap', 'wipefs', 'blkdiscard', 'shred'].includes(name)) {
    const dev = args.find(isDiskDevice);
    return dev === undefined ? undefined : `would destroy the file system on ${dev}`;
  }
  if (name === 'dd') {
    const of = args.find((a) => a.startsWith('of=') && isDiskDevice(a.slice(3)));
    return of === undefined ? undefined : `would overwrite the disk device ${of.slice(3)}`;
  }
  if (name === 'kill') {
    // The first of several words may be a signal (`kill -1 1234` is signal 1); a `-1` after it, or alone, is
    // every process. Only `-1` is looked for, so other signal options need no skipping (`kill -s -1 …`, which
    // kill refuses, is denied).
    const pids = args.length > 1 ? args.slice(1) : args;
    if (pids.includes('-1')) return 'would kill every process you own';
  }
  return undefined;
}

/**
 * What may stand beside `-delete` in a find that deletes everything under its start: options, grouping and
 * actions that select nothing (`find / \( -delete \)`, `find / -print -delete` delete all the same).
 */
const FIND_HARMLESS = new Set([
  '-delete',
  '-depth',
  '-xdev',
  '-mount',
  '-maxdepth',
  '-mindepth',
  '-noleaf',
  '-ignore_readdir_race',
  '-P',
  '-L',
  '-H',
  '(',
  ')',
  '-true',
  '-a',
  '-and',
  '-print',
  '-print0',
  '!',
]);

/**
 * find's starting points and its expression. The starts follow find's own options (`find -L / -delete`:
 * `-H`, `-L`, `-P`, `-D <debug options>`, `-O<level>`) and end at the first word that starts the expression.
 */
function findArgs(args: string[]): { starts: string[]; expression: string[] } {
  let i = 0;
  while (i < args.length) {
    const a = args[i]!;
    if (a === '-H' || a === '-L' || a === '-P' || /^-O\d$/.test(a)) i++;
    else if (a === '-D') i += 2;
    else break;
  }
  const starts: string[] = [];
  while (i < args.length && !args[i]!.startsWith('-') && args[i] !== '(' && args[i] !== '!') starts.push(args[i++]!);
  return { starts, expression: args.slice(i) };
}

/**
 * `-exec rm -rf {} +` and `-execdir rm -r {} ;` delete what they find: read as `-delete`. An `-exec … ;` whose
 * command does not name `{}` runs the same command for every file, so it lets all of them through or none:
 * dropped, like `-true` (`find / -exec rm -f /tmp/x \; -exec rm -rf {} +` and `find / -exec true \; -delete` delete
 * everything; a fixed rm there is judged as its own command). Not `-execdir`, which runs in each file's directory.
 */
function execRmAsDelete(expression: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < expression.length; i++) {
    const a = expression[i]!;
    if (a === '-exec' || a === '-execdir') {
      let end = i + 1;
      while (end < expression.length && expression[end] !== ';' && expression[end] !== '+') end++;
      const command = expression.slice(i + 1, end);
      // find puts the file's name wherever `{}` is in a word, not only in a lone `{}`: `rm -rf {}/` deletes what
      // it found too (`/tmp/{}.bak` names other files). Any other operand beside it is deleted as well.
      const names = command.some((w) => w.includes('{}'));
      const deletes = command[0]?.replace(/^.*\//, '') === 'rm' && command.some((w) => w.startsWith('{}'));
      if (end < expression.length && (deletes || (!names && a === '-exec'))) {
        if (deletes) out.push('-delete');
        i = end;
        continue;
      }
    }
    out.push(a);
  }
  return out;
}

/** Operands of rm-like commands: everything that is not a flag, honouring `--`. */
function operands(args: string[]): string[] {
  const out: string[] = [];
  let flagsDone = false;
  for (const a of args) {
    if (!flagsDone && a === '--') {
      flagsDone = true;
      continue;
    }
    if (!flagsDone && a.startsWith('-') && a.length > 1) continue;
    out.push(a);
  }
  return out;
}

/**
 * Whether `name` is only glob tokens (`*`, `?`, `.`, a `[…]` class) with one glob character (`*`, `?`, or a
 * lone `[`) among them: what `/^(\*|\?|\[[^\]]*\]|\.)*[*?[](\*|\?|\[[^\]]*\]|\.)*$/` matches, in linear time. That
 * regex backtracked over every split point: a 16 KB word of `*` held the event loop 0.5 s, 64 KB about 8 s.
 * Walks the positions reachable before and after the one glob character (each at most once).
 */
export function isGlobOnly(name: string): boolean {
  const n = name.length;
  // The end of the class token starting at i ('[' then non-']' then ']'), or -1.
  const classEnd = (i: number) => {
    const close = name.indexOf(']', i + 1);
    return close < 0 ? -1 : close + 1;
  };
  const token = (i: number) => {
    const c = name[i];
    if (c === '*' || c === '?' || c === '.') return i + 1;
    return c === '[' ? classEnd(i) : -1;
  };
  const before = new Uint8Array(n + 1);
  const after = new Uint8Array(n + 1);
  before[0] = 1;
  for (let i = 0; i <= n; i++) {
    if (before[i] && i < n) {
      const j = token(i);
      if (j > 0) before[j] = 1;
      const c = name[i];
      if (c === '*' || c === '?' || c === '[') after[i + 1] = 1;
    }
    if (after[i] && i < n) {
      const j = token(i);
      if (j > 0) after[j] = 1;
    }
  }
  return after[n] === 1;
}

/**
 * Lexical normalization for rm targets: `$HOME`/`${HOME}` → `~`, `//` and `.`
 * collapsed, `..` resolved (never above `/`; above `~` stays `~/..`).
 */
export function normalizeTarget(path: string): string {
  let p = path.replace(/^\$\{?HOME\}?(?=\/|$)/, '~').replace(/^\$\{?PWD\}?(?=\/|$)/, '.');
  let prefix = '';
  if (p.startsWith('/')) prefix = '/';
  else if (/^~[^/]*/.test(p)) {
    prefix = /^~[^/]*/.exec(p)![0];
    p = p.slice(prefix.length);
  }
  const parts: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length > 0 && parts[parts.length - 1] !== '..') parts.pop();
      else if (prefix !== '/') parts.push('..');
      continue;
    }
    parts.push(part);
  }
  if (prefix === '/') return `/${parts.join('/')}`;
  if (prefix) return parts.length ? `${prefix}/${parts.join('/')}` : prefix;
  return parts.length ? parts.join('/') : '.';
}

/** `/`, `~`, `~user`, `.`, `..`-only, or a bare glob directly inside one of them. */
export function isProtectedTarget(path: string): boolean {
  // An empty word (`rm -rf ""`) names no file: rm fails on it.
  if (path === '') return false;
  const n = normalizeTarget(path);
  if (isProtectedDir(n)) return true;
  const slash = n.lastIndexOf('/');
  const parent = slash < 0 ? '.' : slash === 0 ? '/' : n.slice(0, slash);
  const last = n.slice(slash + 1);
  // A bare `*` in the current directory is left to the policy (as Zed does); `.*` may match `..`.
  if (slash < 0 && !last.startsWith('.') && !path.includes('/')) return false;
  return isGlobOnly(last) && isProtectedDir(parent);
}

function isProtectedDir(n: string): boolean {
  if (n === '/' || n === '.') return true;
  if (/^~[^/]*(\/\.\.)*$/.test(n)) return true;
  return /^\.\.(\/\.\.)*$/.test(n);
}

/** What an rm target is, for the denial: `the root directory (/)`, `the entries of the home directory (~/*)`. */
function describeTarget(path: string): string {
  const n = normalizeTarget(path);
  // Not a protected directory itself: a glob directly in one (isProtectedTarget).
  const glob = !isProtectedDir(n);
  const slash = n.lastIndexOf('/');
  const dir = !glob ? n : slash < 0 ? '.' : slash === 0 ? '/' : n.slice(0, slash);
  const where =
    dir === '/'
      ? 'the root directory'
      : dir === '.'
        ? 'the current directory'
        : dir.startsWith('~') && !dir.endsWith('/..')
          ? 'the home directory'
          : 'a parent directory';
  const what = glob ? `the entries of ${where}` : where;
  return path === n ? `${what} (${path})` : `${what} (${path} is ${n})`;
}

/** Block devices by name. */
const DISK = /^\/dev\/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|rdisk\d|md\d|dm-\d|loop\d|sr\d|nbd\d)/;
/** The links to them udev and the device mapper make (`/dev/disk/by-id/…`, `/dev/block/8:0`, `/dev/mapper/…`). */
const DISK_LINK = /^\/dev\/(disk|block|mapper)\//;

/** Read lexically like an rm target, so `/dev/../dev/sda`, `/dev/./sda` and `//dev//sda` are `/dev/sda`. */
function isDiskDevice(path: string): boolean {
  const n = normalizeTarget(path);
  return DISK.test(n) || DISK_LINK.test(n);
}
