/**
 * @module
 * A terminal command's data checked against its schema (terminal-manager.ts): the error names each bad field.
 */
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import type { CommandDef } from '../../schemas/message.ts';

export type DataOf<T> = T extends CommandDef<string, infer D, unknown> ? D : never;

/** Validates command data with its schema; the error names each bad field. */
export function parse<T extends CommandDef>(def: T, data: unknown): DataOf<T> {
  const result = def.data.safeParse(data);
  if (result.success) return result.data as DataOf<T>;
  const issues = result.error.issues.map((i) => `${i.path.join('.') || '(data)'}: ${i.message}`).join('; ');
  throw new RuntimeError(
    ErrorCode.InvalidMessage,
    `Invalid ${def.type} data (${issues}); fix these fields and send again.`,
    {
      details: { issues: result.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) },
    },
  );
}
