/**
 * @module
 * Path facts for the file tools, lexically (no filesystem access): the
 * workspace-relative raw and normalized forms a rule is matched against, and
 * the always-ask conditions: outside the workspace, a sensitive path (`.git/`,
 * `.skein/`, the policy files), or a symlink that resolves outside (the
 * resolution is an effect: actors/policy-files.ts `resolvePathFacts` gives
 * `resolved`). POSIX paths.
 */
import { normalizePath, relativeInside } from '../common/confine.ts';

/**
 * What the caller knows about a path; `resolved` is the realpath (or the realpath of the deepest existing ancestor +
 * the rest).
 */
export type PathFacts = {
  /** Absolute workspace roots, lexically normalized. The first one resolves relative paths. */
  roots: string[];
  /** The roots after realpath (to compare `resolved` with); defaults to `roots`. */
  realRoots?: string[];
  resolved?: string;
  /** Absolute paths that always ask (policy files). */
  sensitive?: string[];
};

/** Why a path always asks, with the prompt text. */
export type AlwaysAsk = { scope: 'symlink' | 'sensitive' | 'outside'; reason: string };

export { normalizePath };

/** `path` relative to `root` when inside it (both absolute); undefined when outside. One rule: `confine.ts`. */
export const relativeTo = relativeInside;

/** The forms a file rule is matched against: raw (as given, made workspace-relative) and normalized. */
export function pathForms(
  path: string,
  facts: PathFacts,
): { raw: string; normalized: string; absolute: string; inside: boolean } {
  const root = facts.roots[0] ?? '/';
  const absolute = normalizePath(path.startsWith('/') ? path : `${root}/${path}`);
  let inside = false;
  let normalized = absolute;
  for (const r of facts.roots) {
    const rel = relativeTo(normalizePath(r), absolute);
    if (rel !== undefined) {
      normalized = rel;
      inside = true;
      break;
    }
  }
  let raw = path.replace(/^(\.\/)+/, '');
  if (path.startsWith('/')) {
    for (const r of facts.roots) {
      const prefix = `${normalizePath(r)}/`;
      if (path.startsWith(prefix)) {
        raw = path.slice(prefix.length);
        break;
      }
    }
  }
  return { raw, normalized, absolute, inside };
}

const SENSITIVE_DIRS = new Set(['.git', '.skein']);
/**
 * Files read later outside any sandbox: `skein.config.json` by the next `skein up` (it can turn the sandbox
 * off), `.gitmodules` by `git submodule update` (what it fetches and runs). Found by a review: file.write under
 * an allowing write rule created both, while `.skein/…` and `.git/…` asked.
 */
const SENSITIVE_FILES = new Set(['skein.config.json', '.gitmodules']);

/** The always-ask condition of a path, if any (symlink escape first, then sensitive, then outside). */
export function alwaysAsk(path: string, facts: PathFacts): AlwaysAsk | undefined {
  const forms = pathForms(path, facts);
  const realRoots = (facts.realRoots ?? facts.roots).map(normalizePath);
  if (facts.resolved !== undefined) {
    const resolved = normalizePath(facts.resolved);
    const insideReal = realRoots.some((r) => relativeTo(r, resolved) !== undefined);
    if (forms.inside && !insideReal) {
      return { scope: 'symlink', reason: `\`${path}\` points outside the project (symlink to \`${resolved}\`)` };
    }
  }
  const candidates = [forms.raw, forms.normalized, forms.absolute];
  if (facts.resolved !== undefined) {
    const resolved = normalizePath(facts.resolved);
    candidates.push(resolved);
    for (const r of realRoots) {
      const rel = relativeTo(r, resolved);
      if (rel !== undefined) candidates.push(rel);
    }
  }
  const sensitiveFiles = (facts.sensitive ?? []).map(normalizePath);
  for (const c of candidates) {
    if (c.split('/').some((part) => SENSITIVE_DIRS.has(part.toLowerCase()))) {
      return { scope: 'sensitive', reason: `\`${path}\` is inside a protected directory (.git or .skein)` };
    }
    if (SENSITIVE_FILES.has(c.split('/').at(-1)!.toLowerCase())) {
      return {
        scope: 'sensitive',
        reason: `\`${path}\` is read later outside the sandbox (skein.config.json, .gitmodules)`,
      };
    }
    if (sensitiveFiles.includes(normalizePath(c.startsWith('/') ? c : `${facts.roots[0] ?? '/'}/${c}`))) {
      return { scope: 'sensitive', reason: `\`${path}\` is a permission policy file` };
    }
  }
  if (!forms.inside) return { scope: 'outside', reason: `\`${path}\` is outside the workspace` };
  return undefined;
}

/**
 * The word of a shell command that names skein's policy (a `.skein` path component, `skein.config.json`, which
 * can turn the sandbox off at the next start, or a `skein/policy.json` such as the global file), literally or
 * through a glob that could match it (`.sk*`); undefined when none does. A command naming it always asks: an
 * agent must not rewrite the policy that judges it (the project and global files are reloaded when they
 * change). Words built from expansions ask anyway (permission-policy.ts); a program that computes the name
 * itself (`python3 -c …`) is not seen here, only the sandbox stops it.
 */
export function namesPolicy(text: string): string | undefined {
  for (const word of text.split(/[\s;&|<>()'"`=,{}]+/)) {
    if (!word) continue;
    const parts = word.split('/');
    for (let i = 0; i < parts.length; i++) {
      if (matchesPart(parts[i]!, '.skein') || matchesPart(parts[i]!, 'skein.config.json')) return word;
      if (matchesPart(parts[i]!, 'skein') && parts[i + 1] !== undefined && matchesPart(parts[i + 1]!, 'policy.json'))
        return word;
    }
  }
  return undefined;
}

/**
 * Whether the glob `part` could match `name`, case-insensitively (a check that errs towards asking). A matcher
 * over tokens, not a regex: `*a*a*…` compiled to `.*a.*a…` backtracked exponentially, and 100 `*` before an `x`
 * in any word of a command held the host for two minutes. Here it is O(|part| × |name|).
 */
export function matchesPart(part: string, name: string): boolean {
  if (part.toLowerCase() === name) return true;
  // A word without a wildcard is compared too: its letters fold like a glob's (`.ſkein` as `.ſk*` does). Each
  // of its characters is one of the name's, so only a word of the name's length can match; no tokens are made
  // (they were ~12 KB of garbage per command, every word of it tried against four names).
  if (!WILDCARD.test(part)) {
    if (part.length !== name.length) return false;
    for (let i = 0; i < part.length; i++) if (!sameLetter(part[i]!, name[i]!)) return false;
    return true;
  }
  let tokens: GlobToken[];
  try {
    tokens = globTokens(part);
  } catch {
    return true; // a class JavaScript cannot read (`[z-a]`): cannot tell, so treat it as naming the policy
  }
  // The classic wildcard walk: on a mismatch, go back to the last `*` and let it take one more character.
  let t = 0;
  let n = 0;
  let star = -1;
  let starAt = 0;
  while (n < name.length) {
    const tok = tokens[t];
    if (tok !== undefined && tok !== STAR && tok(name[n]!)) {
      t++;
      n++;
    } else if (tok === STAR) {
      star = t++;
      starAt = n;
    } else if (star >= 0) {
      t = star + 1;
      n = ++starAt;
    } else return false;
  }
  while (tokens[t] === STAR) t++;
  return t === tokens.length;
}

/** A character that makes a word a glob: `*`, `?` or `[` (a `[` without its `]` is then read as a literal). */
const WILDCARD = /[*?[]/;

/** Whether two characters are one letter without case: equal, or equal in lower or in upper case. */
function sameLetter(a: string, b: string): boolean {
  return a === b || a.toLowerCase() === b.toLowerCase() || a.toUpperCase() === b.toUpperCase();
}

/** A glob token: `*`, or a test of one character (`?`, a class, a literal). */
type GlobToken = typeof STAR | ((c: string) => boolean);
const STAR = 'star' as const;

/**
 * A bash glob as tokens: `*` (runs of it are one), `?`, and `[…]` classes (`!` or `^` negates). A `[` with no
 * closing `]` is a literal `[`, as bash reads it (`printf '\033[1;31m'` names no file). Letters compare
 * without case (upper or lower forms equal). Throws when a class is not one JavaScript can read.
 */
function globTokens(glob: string): GlobToken[] {
  const out: GlobToken[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (out.at(-1) !== STAR) out.push(STAR);
    } else if (c === '?') out.push(() => true);
    else if (c === '[') {
      // The class ends at the first `]` after its first character (a leading `]` is part of the class).
      const start = glob[i + 1] === '!' || glob[i + 1] === '^' ? i + 2 : i + 1;
      const end = glob.indexOf(']', start + 1);
      if (end === -1 || start >= glob.length) {
        out.push((ch) => ch === '[');
        continue;
      }
      const negate = start === i + 2 ? '^' : '';
      const body = glob.slice(start, end).replace(/[\\\]^]/g, '\\$&');
      const one = new RegExp(`^[${negate}${body}]$`, 'i');
      out.push((ch) => one.test(ch));
      i = end;
    } else out.push((ch) => sameLetter(c, ch));
  }
  return out;
}
