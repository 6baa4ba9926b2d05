/**
 * @module
 * `newId` draws its random bytes from a pool refilled 4 KiB at a time: ids stay tokens with the prefix, and
 * stay distinct across refills (each byte is used once).
 */
import { describe, expect, it } from 'vitest';
import { newId, TOKEN_PATTERN } from '../../schemas/ids.ts';

describe('newId', () => {
  it('gives distinct tokens of the prefix and 10 base-36 characters across many pool refills', () => {
    const ids = Array.from({ length: 5_000 }, () => newId('p'));
    for (const id of ids) {
      expect(id).toMatch(/^p-[0-9a-z]{10}$/);
      expect(id).toMatch(TOKEN_PATTERN);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });
});
