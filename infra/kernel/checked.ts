/**
 * @module
 * Parsing what typed code built, once: a fact's data or a reply marked by `checkedFact`/`checkedReply`
 * (schemas/message.ts) is taken as it is, anything else is parsed with its schema. With `parseChecked` (on
 * under vitest, or SKEIN_PARSE_CHECKED_FACTS=1) marked values are parsed too and refused when the parse
 * would give anything else, so every test checks the typed hot paths against their schemas at run time.
 */
import type { z } from 'zod';
import { isCheckedData } from '../../schemas/index.ts';
import { canonicalJson } from '../../machines/kernel/projection.ts';

/** Whether marked values are parsed anyway: on under vitest or with SKEIN_PARSE_CHECKED_FACTS=1. */
export const PARSE_CHECKED_DEFAULT =
  process.env['VITEST'] !== undefined || process.env['SKEIN_PARSE_CHECKED_FACTS'] === '1';

export type CheckResult = { success: true; data: unknown } | { success: false; message: string };

/** `schema.safeParse(value)`, skipped for a value typed code marked (see the module doc). */
export function parseUnlessChecked(schema: z.ZodType, value: unknown, parseChecked: boolean): CheckResult {
  const checked = isCheckedData(value);
  if (checked && !parseChecked) return { success: true, data: value };
  const parsed = schema.safeParse(value);
  if (!parsed.success) return { success: false, message: parsed.error.message };
  if (checked && canonicalJson(parsed.data) !== canonicalJson(value)) {
    return {
      success: false,
      message: 'it was marked checked, but its parse differs from it; build it with its schema output type',
    };
  }
  return parsed;
}
