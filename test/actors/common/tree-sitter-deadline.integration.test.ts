/**
 * A parse with a deadline (`withTree`'s `maxMs`, the outline's `OUTLINE_PARSE_MS`): tree-sitter parses on the
 * host's thread, and megabytes of nested brackets held it for seconds. Past the deadline the parse is given up
 * with `ParseTimeoutError`, and the parser is reset: the next parse is of its own source, not the rest of the
 * one given up.
 */
import { describe, expect, it } from 'vitest';
import { ParseTimeoutError, withTree } from '../../../actors/common/tree-sitter.ts';
import { outline } from '../../../actors/edit/syntax.ts';

/** Lines of nested parentheses: slow for the JavaScript grammar (seconds for a few megabytes). */
const brackets = `${'(('.repeat(600)}\n`.repeat(3_000);

describe('tree-sitter parse deadline', () => {
  it('gives up a parse past its deadline, and the next parse is of its own source', async () => {
    const started = performance.now();
    await expect(withTree('javascript', brackets, () => 'parsed', { maxMs: 20 })).rejects.toThrow(ParseTimeoutError);
    // Given up near the deadline (the check runs every few hundred bytes), not after the whole parse.
    const spent = performance.now() - started;
    const symbols = await withTree('javascript', 'function small() {}\n', (tree) => [
      tree.rootNode.type,
      tree.rootNode.text,
      tree.rootNode.hasError,
    ]);
    expect(symbols).toEqual(['program', 'function small() {}\n', false]);
    console.log(`deadline 20 ms: given up after ${spent.toFixed(0)} ms`);
  });

  it('reads an outline as usual within its deadline', async () => {
    const src = Array.from({ length: 3_000 }, (_, i) => `export function f${i}() { return ${i}; }`).join('\n');
    const symbols = await outline('big.ts', src);
    expect(symbols?.length).toBe(1_000);
    expect(symbols?.[0]).toMatchObject({ name: 'f0', startLine: 1 });
  });
});
