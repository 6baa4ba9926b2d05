/**
 * @module
 * Workspace confinement, lexically (no file system): is a path inside a root, and which components lead
 * from a root to a path. Paths are POSIX. Inside means "equal to the root, or below it by whole components":
 * `/w/ws-evil` is NOT inside `/w/ws` although the string starts with it. The effectful walk that follows
 * these components without trusting symlinks is `actors/common/confined-fs.ts`; every "is it inside"
 * question in skein comes here, so there is one answer.
 */

/** Lexical normalization: `.` and empty parts dropped, `..` resolved (never above `/` for absolute paths). */
export function normalizePath(path: string): string {
  const absolute = path.startsWith('/');
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length > 0 && parts[parts.length - 1] !== '..') parts.pop();
      else if (!absolute) parts.push('..');
      continue;
    }
    parts.push(part);
  }
  const joined = parts.join('/');
  return absolute ? `/${joined}` : joined || '.';
}

/**
 * `path` relative to `root` when inside it (`'.'` for the root itself), else undefined. Both are normalized
 * first; the comparison is by whole components, never by string prefix.
 */
export function relativeInside(root: string, path: string): string | undefined {
  const r = normalizePath(root);
  const p = normalizePath(path);
  if (!r.startsWith('/') || !p.startsWith('/')) return undefined;
  if (p === r) return '.';
  const prefix = r === '/' ? '/' : `${r}/`;
  return p.startsWith(prefix) ? p.slice(prefix.length) : undefined;
}

/** Whether `path` is `root` or below it (absolute paths, by whole components). */
export function isInside(root: string, path: string): boolean {
  return relativeInside(root, path) !== undefined;
}

/** Where a requested path leads: the root it is under (index into the roots) and the components below it. */
export type Confined = { ok: true; root: number; parts: string[] } | { ok: false; absolute: string };

/**
 * Splits `given` (absolute, or relative to the first root) into the root it lies in and the components
 * below that root, after lexical `..` resolution. `..` can never climb above the root: a relative path
 * whose `..` leaves the root is outside. A root may be named by several spellings (its lexical and its real
 * path); `roots[i]` lists them all for root `i`.
 */
export function confine(roots: ReadonlyArray<readonly string[]>, given: string): Confined {
  const first = roots[0]?.[0] ?? '/';
  const absolute = normalizePath(given.startsWith('/') ? given : `${first}/${given}`);
  for (let i = 0; i < roots.length; i++) {
    for (const spelling of roots[i] ?? []) {
      const rel = relativeInside(spelling, absolute);
      if (rel !== undefined) return { ok: true, root: i, parts: rel === '.' ? [] : rel.split('/') };
    }
  }
  return { ok: false, absolute };
}
