/**
 * @module
 * The state digest: sha256 of every aggregate state in canonical form. Live (`Host.digest()`) and replayed
 * (`skein replay --digest`) states are compared with it, so it has its own known-value tests.
 */
import { createHash } from 'node:crypto';
import { canonicalJson, type Fold } from '../../machines/kernel/projection.ts';

export function digestOf(fold: Fold): string {
  return createHash('sha256').update(canonicalJson(fold.states())).digest('hex');
}
