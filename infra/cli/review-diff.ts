/**
 * @module
 * How `skein review --diff` shows a file's diff to a person: paths relative to the working dir (`a/src/x.ts`,
 * not `a/tmp/ws/src/x.ts`) so the patch reads and applies from there (`git apply`, `patch -p1`), each `@@`
 * line followed by the hunk id `skein accept --hunk` takes, and colour on a terminal unless NO_COLOR is set.
 */
import { isAbsolute, relative } from 'node:path';
import type { FileReview } from '../../schemas/review.ts';

const SGR = { reset: '\x1b[0m', bold: '\x1b[1m', red: '\x1b[31m', green: '\x1b[32m', cyan: '\x1b[36m' } as const;

/** Colour when stdout is a terminal and NO_COLOR (https://no-color.org: any non-empty value) is unset. */
export function wantsColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}

/** `path` relative to `cwd` when inside it, else as is (absolute: there is no shorter honest name). */
export function displayPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? path : rel;
}

export function renderDiff(
  file: Pick<FileReview, 'path' | 'diff' | 'hunks'>,
  options: { cwd: string; color: boolean },
): string {
  const paint = (code: string, text: string) => (options.color ? `${code}${text}${SGR.reset}` : text);
  const shown = displayPath(file.path, options.cwd);
  const sep = isAbsolute(shown) ? '' : '/';
  let hunk = 0;
  let inHeader = true;
  const out: string[] = [];
  for (const line of file.diff.replace(/\n$/, '').split('\n')) {
    if (line.startsWith('@@')) {
      inHeader = false;
      const id = file.hunks[hunk++]?.id;
      out.push(paint(SGR.cyan, id === undefined ? line : `${line} ${id}`));
    } else if (inHeader && (line.startsWith('--- ') || line.startsWith('+++ '))) {
      // Only the two header lines: a removed line "-- x" also starts with "--- " inside a hunk.
      const name = line.slice(4);
      const side = line.startsWith('---') ? 'a' : 'b';
      const renamed = name === '/dev/null' ? name : `${side}${sep}${shown}`;
      out.push(paint(SGR.bold, `${line.slice(0, 4)}${renamed}`));
    } else if (!inHeader && line.startsWith('+')) out.push(paint(SGR.green, line));
    else if (!inHeader && line.startsWith('-')) out.push(paint(SGR.red, line));
    else out.push(line);
  }
  return out.join('\n');
}
