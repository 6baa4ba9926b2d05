/**
 * @module
 * Which workspace paths a snapshot skips: always `.git`, `node_modules` and
 * `.skein`; plus what the workspace's `.gitignore` files say, read with the
 * `ignore` package (git's own rules: `!` negation, `[abc]` classes, `**`,
 * anchored and directory-only patterns). A nested `.gitignore` applies below
 * its directory and may re-include what a parent's excluded, as in git.
 * A skipped path only means its changes are not reviewable (never that
 * something is wrongly restored).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import ignore, { type Ignore } from 'ignore';

export const ALWAYS_SKIPPED = ['.git', 'node_modules', '.skein'] as const;

export type IgnoreMatcher = (relPath: string, isDir: boolean) => boolean;

/** The rules of every `.gitignore` seen so far in one workspace, by the directory holding it. */
export class WorkspaceIgnore {
  readonly #root: string;
  readonly #byDir = new Map<string, Ignore>();

  private constructor(root: string) {
    this.#root = root;
  }

  /** The matcher for a workspace root (its `.gitignore` when present, plus `extra` patterns). */
  static async load(root: string, extra: readonly string[] = []): Promise<WorkspaceIgnore> {
    const matcher = new WorkspaceIgnore(root);
    // skein's own atomic-write temp files (`.name.skein-….tmp`) exist only mid-write: never a change.
    matcher.#byDir.set('', ignore().add([...(await readGitignore(root)), '.*.skein-*.tmp', ...extra]));
    return matcher;
  }

  /** Rules from literal lines, as if they were the root's `.gitignore` (no files read). */
  static fromLines(lines: readonly string[]): WorkspaceIgnore {
    const matcher = new WorkspaceIgnore('');
    matcher.#byDir.set('', ignore().add([...lines]));
    return matcher;
  }

  /** Reads the `.gitignore` of a directory the walk enters (relative to the root; '' is the root itself). */
  async enter(relDir: string): Promise<void> {
    if (relDir === '' || this.#byDir.has(relDir)) return;
    const lines = await readGitignore(join(this.#root, relDir));
    if (lines.length > 0) this.#byDir.set(relDir, ignore().add(lines));
  }

  /** Whether `relPath` (slash-separated, relative to the root) is skipped. */
  ignores(relPath: string, isDir: boolean): boolean {
    const parts = relPath.split('/');
    if ((ALWAYS_SKIPPED as readonly string[]).includes(parts[parts.length - 1]!)) return true;
    let ignored = false;
    // Every .gitignore from the root down to the path's parent, the deeper one deciding last (as git does).
    for (let i = 0; i < parts.length; i++) {
      const rules = this.#byDir.get(parts.slice(0, i).join('/'));
      if (!rules) continue;
      const result = rules.test(`${parts.slice(i).join('/')}${isDir ? '/' : ''}`);
      if (result.ignored) ignored = true;
      else if (result.unignored) ignored = false;
    }
    return ignored;
  }
}

/** The matcher for a workspace root (reads its `.gitignore` when present). */
export async function loadIgnore(root: string, extra: readonly string[] = []): Promise<WorkspaceIgnore> {
  return WorkspaceIgnore.load(root, extra);
}

/** A matcher of literal `.gitignore` lines, rooted where the walk starts. */
export function compileIgnore(lines: readonly string[]): IgnoreMatcher {
  const matcher = WorkspaceIgnore.fromLines(lines);
  return (relPath, isDir) => matcher.ignores(relPath, isDir);
}

async function readGitignore(dir: string): Promise<string[]> {
  try {
    return (await readFile(join(dir, '.gitignore'), 'utf8')).split(/\r?\n/);
  } catch {
    return []; // no .gitignore here
  }
}
