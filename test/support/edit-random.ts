/**
 * @module
 * Seeded randomness for edit-kernel tests: mulberry32, chunking a text at
 * random boundaries, and a list of seeds (`FC_SEED`/`EDIT_SEED` pins one).
 */
import { propertySeed } from './seed.ts';

/** mulberry32: a tiny seeded PRNG returning floats in [0, 1). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Splits `text` into 1..maxLen-sized chunks (by UTF-16 unit, so surrogate pairs may split). */
export function randomChunks(text: string, random: () => number, maxLen = 8): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    const n = 1 + Math.floor(random() * maxLen);
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

/** `count` seeds starting from `EDIT_SEED` (or a time-based base), printed in test names. */
export function seeds(count: number): number[] {
  const base = propertySeed();
  return Array.from({ length: count }, (_, i) => (base + i * 7919) % 2 ** 31);
}

/** Every way the tests feed a text: whole, per character, and random chunks for `seedList`. */
export function feeds(text: string, seedList: readonly number[]): Array<{ name: string; chunks: string[] }> {
  return [
    { name: 'whole', chunks: [text] },
    { name: 'per char', chunks: Array.from(text) },
    ...seedList.map((s) => ({ name: `random chunks (seed ${s})`, chunks: randomChunks(text, seeded(s)) })),
  ];
}
