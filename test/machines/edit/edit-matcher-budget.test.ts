/**
 * The fuzzy search's work bound (`MAX_FUZZY_STEPS`): an old_text that would make it compare and walk back without
 * end is refused naming the sizes, having done at most the bound; one it cannot take at all is refused before any
 * work; an exact old_text has no bound; an ordinary fuzzy edit is not touched by it; and a match found nearly
 * everywhere names a few places, not thousands.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { planEdit } from '../../../machines/edit/edit-apply.ts';
import { MAX_BEST_TRACED, MAX_FUZZY_STEPS, StreamingFuzzyMatcher } from '../../../machines/edit/edit-matcher.ts';
import { editErrors } from '../../../machines/edit/edit-text.ts';

const lines = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => line(i)).join('\n');
/** A file of near-alike lines: every line is a fuzzy candidate of every near-alike query line. */
const alike = `${lines(5_000, (i) => `  const value${i % 50} = compute(${i % 7}, "x");`)}\n`;
const nearAlike = (n: number) => lines(n, (i) => `const value${i % 50} = compute(${(i + 3) % 7}, 'y');`);

function search(buffer: string, query: string) {
  const m = new StreamingFuzzyMatcher(buffer);
  m.push(query, true);
  return { m, found: m.finish() };
}

describe('fuzzy search work bound', () => {
  it('refuses an old_text whose search passes the bound, after at most the bound, naming both sizes', () => {
    const query = nearAlike(500);
    const { m, found } = search(alike, query);
    expect(found).toEqual({ kind: 'fuzzy', matches: [], tooLarge: { queryLines: 500, bufferLines: 5_000 } });
    // At most one more Levenshtein row or DP row than the bound.
    expect(m.steps).toBeGreaterThan(MAX_FUZZY_STEPS);
    expect(m.steps).toBeLessThanOrEqual(MAX_FUZZY_STEPS + 5_001);
    expect(planEdit(alike, query, found, 2, false)).toEqual({
      index: 2,
      reason: 'unresolved',
      message: editErrors.tooLarge(2, 500, 5_000),
    });
  });

  it('refuses before any work when the DP alone would pass the bound', () => {
    const buffer = `${lines(20_000, (i) => `row ${i}`)}\n`;
    const rows = Math.ceil(MAX_FUZZY_STEPS / 20_000) + 2;
    const query = lines(rows, (i) => `rw ${i}`);
    const { m, found } = search(buffer, query);
    expect(found.tooLarge).toEqual({ queryLines: rows, bufferLines: 20_000 });
    expect(m.steps).toBe(0);
  });

  it('refuses one long line nearly like the file’s, which one Levenshtein table would not bound', () => {
    const long = 'abcdefghij'.repeat(20_000);
    const query = `${long.slice(0, -1)}X`;
    const { m, found } = search(`${long}\n${long}\n`, query);
    expect(found.tooLarge).toEqual({ queryLines: 1, bufferLines: 2 });
    expect(m.steps).toBeLessThanOrEqual(MAX_FUZZY_STEPS + 2 * long.length);
  });

  it('has no bound on an exact old_text', () => {
    const buffer = `${lines(40_000, (i) => `exact line ${i}`)}\n`;
    const query = lines(20_000, (i) => `exact line ${i + 10_000}`);
    const { m, found } = search(buffer, query);
    expect(found.kind).toBe('exact');
    expect(found.matches.map((x) => x.range.start)).toEqual([buffer.indexOf('exact line 10000\n')]);
    expect(m.steps).toBe(0);
  });

  it('leaves an ordinary fuzzy edit alone: 40 re-indented lines in 10,000 and more of this repository’s code', () => {
    // The pure modules' and the actors' sources, one after the other: real code, whatever it holds the day this runs.
    const buffer = ['machines', 'actors']
      .map((d) => fileURLToPath(new URL(`../../../${d}/`, import.meta.url)))
      .flatMap((dir) =>
        readdirSync(dir, { recursive: true, encoding: 'utf8' })
          .filter((f) => f.endsWith('.ts'))
          .sort()
          .map((f) => readFileSync(join(dir, f), 'utf8')),
      )
      .join('');
    const rows = buffer.split('\n');
    const from = Math.floor(rows.length * 0.7);
    const query = rows
      .slice(from, from + 40)
      .map((l) => l.replace(/^ +/, '  ').replace(/;$/, ''))
      .join('\n');
    const { m, found } = search(buffer, query);
    expect(rows.length).toBeGreaterThan(10_000);
    expect(found.tooLarge).toBeUndefined();
    expect(found.matches.map((x) => x.range.start)).toContain(rows.slice(0, from).join('\n').length + 1);
    expect(m.steps).toBeLessThan(MAX_FUZZY_STEPS / 4);
  });

  it('names at most a few places of a match found nearly everywhere, and says there are more', () => {
    const query = nearAlike(3);
    const { m, found } = search(alike, query);
    expect(found.more).toBe(true);
    expect(found.matches.length).toBeGreaterThanOrEqual(2);
    expect(found.matches.length).toBeLessThanOrEqual(2 * MAX_BEST_TRACED);
    expect(m.steps).toBeLessThan(MAX_FUZZY_STEPS);
    const plan = planEdit(alike, query, found, 0, false);
    expect(plan).toMatchObject({ reason: 'ambiguous' });
    expect('message' in plan && plan.message).toMatch(/at lines: 1, 2, [\d, ]+ and more\. Please provide/);
  });
});
