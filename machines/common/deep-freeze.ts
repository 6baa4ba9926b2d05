/**
 * @module
 * Freezes a value and everything in it: what one cache hands to many callers (a shell split, a remembered
 * decision) must not be changed by any of them.
 */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
