/**
 * @module
 * The one seed every randomized test uses: fast-check properties (`{ seed }`)
 * and the hand-rolled random chunkings (`seeds()`, `seeded()`).
 *
 * - `FC_SEED=<n>` set: that seed (replaying a failure).
 * - `CI` set: a fixed seed, so CI is deterministic and a red build reproduces.
 * - otherwise: a random seed per test file, so local runs keep exploring.
 *
 * Whichever it is, it is printed once per test file with the command that
 * replays it: `FC_SEED=<n> npx vitest run <file>`.
 */
import { relative } from 'node:path';
import { expect } from 'vitest';

/** The seed CI uses. Changing it changes which random cases CI sees; keep it unless a reason is written down. */
export const CI_SEED = 20261130;

let chosen: { seed: number; why: string } | undefined;
const printed = new Set<string>();

function choose(): { seed: number; why: string } {
  if (chosen) return chosen;
  const pinned = process.env['FC_SEED'] ?? process.env['EDIT_SEED'];
  if (pinned !== undefined && pinned !== '') {
    const seed = Number(pinned);
    if (!Number.isSafeInteger(seed)) {
      throw new Error(`FC_SEED='${pinned}' is not an integer; set it to the seed a failing run printed`);
    }
    chosen = { seed, why: 'from FC_SEED' };
  } else if (process.env['CI']) {
    chosen = { seed: CI_SEED, why: 'fixed for CI' };
  } else {
    chosen = { seed: Math.floor(Math.random() * 2 ** 31), why: 'random' };
  }
  return chosen;
}

/** This file's seed, printed with the command that replays it. */
export function propertySeed(): number {
  const { seed, why } = choose();
  const testPath = expect.getState().testPath;
  const file = testPath ? relative(process.cwd(), testPath) : '<test file>';
  if (!printed.has(file)) {
    printed.add(file);
    console.info(`random seed ${seed} (${why}); replay: FC_SEED=${seed} npx vitest run ${file}`);
  }
  return seed;
}
