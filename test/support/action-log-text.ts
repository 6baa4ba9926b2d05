/**
 * @module
 * Generators and helpers for action-log tests: random texts made of few
 * distinct lines (so context repeats and hunk placement is really tested),
 * random line edits, and a sha256 for pure planning.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { propertySeed } from './seed.ts';

export const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

const line = fc.constantFrom('a', 'b', 'c', '', '  indented', 'x = 1;', 'tab\there', 'crlf\r');

/** A text of 0-40 lines from a small alphabet, with or without a final newline. */
export const textArb = fc
  .record({ lines: fc.array(line, { maxLength: 40 }), finalNewline: fc.boolean() })
  .map(({ lines, finalNewline }) => lines.join('\n') + (finalNewline && lines.length > 0 ? '\n' : ''));

type Op = { at: number; del: number; ins: string[] };
const opArb = fc.record({ at: fc.nat(60), del: fc.nat(4), ins: fc.array(line, { maxLength: 4 }) });

/** Applies random line edits to a text (positions clamp to the text). */
export function editText(text: string, ops: Op[], finalNewline: boolean | null): string {
  const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  for (const op of ops) {
    const at = Math.min(op.at, lines.length);
    lines.splice(at, op.del, ...op.ins);
  }
  const hadNewline = text.endsWith('\n');
  const nl = finalNewline ?? hadNewline;
  return lines.join('\n') + (nl && lines.length > 0 ? '\n' : '');
}

/** A base text and an edited version of it. */
export const editedPairArb = fc
  .record({
    base: textArb,
    ops: fc.array(opArb, { minLength: 1, maxLength: 6 }),
    nl: fc.option(fc.boolean(), { nil: null }),
  })
  .map(({ base, ops, nl }) => ({ base, current: editText(base, ops, nl) }));

export const fcSeed = (): number => propertySeed();
