/**
 * @module
 * Which workspace paths a snapshot skips: always `.git`, `node_modules` and
 * `.skein`; plus the patterns of the workspace root's `.gitignore`, in a
 * simplified form: `name`, `*.ext`, `dir/`, `/anchored/path`, `a/**\/b`.
 * Negations (`!pattern`) and nested `.gitignore` files are not supported:
 * a path they would re-include is skipped, which only means its changes are
 * not reviewable (never that something is wrongly restored).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export const ALWAYS_SKIPPED = ['.git', 'node_modules', '.skein'] as const;

export type IgnoreMatcher = (relPath: string, isDir: boolean) => boolean;

type Rule = { re: RegExp; dirOnly: boolean; anchored: boolean };

/** The matcher for a workspace root (reads its `.gitignore` when present). */
export async function loadIgnore(root: string, extra: readonly string[] = []): Promise<IgnoreMatcher> {
  let text = '';
  try {
    text = await readFile(join(root, '.gitignore'), 'utf8');
  } catch {
    // no .gitignore: only the fixed skips
  }
  // skein's own atomic-write temp files (`.name.skein-….tmp`) exist only mid-write: never a change.
  return compileIgnore([...text.split('\n'), '.*.skein-*.tmp', ...extra]);
}

export function compileIgnore(lines: readonly string[]): IgnoreMatcher {
  const rules: Rule[] = [];
  for (const raw of lines) {
    let line = raw.replace(/\r$/, '').trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const dirOnly = line.endsWith('/');
    if (dirOnly) line = line.slice(0, -1);
    const anchored = line.startsWith('/') || line.includes('/');
    if (line.startsWith('/')) line = line.slice(1);
    if (line === '') continue;
    rules.push({ re: new RegExp(`^${globToRegex(line)}$`), dirOnly, anchored });
  }
  return (relPath, isDir) => {
    const parts = relPath.split('/');
    const name = parts[parts.length - 1]!;
    if ((ALWAYS_SKIPPED as readonly string[]).includes(name)) return true;
    for (const r of rules) {
      if (r.dirOnly && !isDir) continue;
      if (r.re.test(r.anchored ? relPath : name)) return true;
    }
    return false;
  };
}

function globToRegex(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      i++;
      if (glob[i + 1] === '/') {
        out += '(?:.*/)?';
        i++;
      } else out += '.*';
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return out;
}
