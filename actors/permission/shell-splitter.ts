/**
 * @module
 * The shell splitter the permission gate uses: the bash grammar loaded once, and `splitShell`
 * (`shell-parse.ts`) remembered per input text, since a split is a pure function of the text.
 */
import { parserFor } from '../common/tree-sitter.ts';
import type { ShellSplit } from '../../machines/permission/shell-words.ts';
import { deepFreeze } from '../../machines/common/deep-freeze.ts';
import { splitShell } from './shell-parse.ts';

export type ShellSplitter = (source: string) => ShellSplit;

/**
 * Splits remembered per splitter, by input text (most recently used kept). Agents run the same commands
 * again and again (`ls`, `git status`, the test command), and a tree-sitter parse of even `true` costs about
 * 0.2 ms of an exec's ~4 ms round trip; more entries cost memory (inputs up to `MEMO_MAX_CHARS` each).
 */
const MEMO_ENTRIES = 512;
const MEMO_MAX_CHARS = 4_096;

/**
 * Loads the bash grammar once and returns a synchronous splitter. The split is a pure function of the text,
 * so a repeated input gets the same (frozen) split back without parsing it again.
 */
export async function createShellSplitter(): Promise<ShellSplitter> {
  const parser = await parserFor('bash');
  const memo = new Map<string, ShellSplit>();
  return (source) => {
    const known = memo.get(source);
    if (known) {
      memo.delete(source);
      memo.set(source, known);
      return known;
    }
    const split = deepFreeze(splitShell(parser, source));
    if (source.length <= MEMO_MAX_CHARS) {
      memo.set(source, split);
      if (memo.size > MEMO_ENTRIES) memo.delete(memo.keys().next().value!);
    }
    return split;
  };
}
