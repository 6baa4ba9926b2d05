/**
 * @module
 * Shared CLI plumbing: exit codes, error printing, readable fact lines.
 */
import { eventsByType, toErrorInfo, type Fact } from '../../schemas/index.ts';

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

export class UsageError extends Error {
  override name = 'UsageError';
}

/** Prints an error to stderr and sets the exit code (2 for usage errors). */
export function fail(err: unknown): void {
  const info = toErrorInfo(err);
  process.stderr.write(`skein: ${info.message}\n`);
  process.exitCode = err instanceof UsageError || info.code === 'invalid_config' ? EXIT.usage : EXIT.failed;
}

/** Runs a CLI action, turning thrown errors into messages and exit codes. */
export async function action(work: () => Promise<number | undefined>): Promise<void> {
  try {
    const code = await work();
    if (typeof code === 'number') process.exitCode = code;
  } catch (err) {
    fail(err);
  }
}

/** `12:03:04.120 main agent.spawned a-1 "tests" parent=main …` */
export function factLine(fact: Fact & { seq?: number }): string {
  const time = fact.at.slice(11, 23);
  const def = eventsByType.get(fact.type);
  let detail: string;
  try {
    detail = def?.describe ? def.describe(fact.data as never) : summarize(fact.data);
  } catch {
    detail = summarize(fact.data);
  }
  const seq = fact.seq === undefined ? '' : `#${fact.seq} `;
  return `${time} ${seq}${fact.agentId} ${fact.type} ${detail}`.trimEnd();
}

/** Top-level scalar fields, long strings cut: never a dump of output. */
export function summarize(data: unknown): string {
  if (!data || typeof data !== 'object') return '';
  return Object.entries(data as Record<string, unknown>)
    .filter(([, v]) => v === null || ['string', 'number', 'boolean'].includes(typeof v))
    .map(([k, v]) => {
      const text = typeof v === 'string' ? JSON.stringify(v.length > 60 ? `${v.slice(0, 57)}...` : v) : String(v);
      return `${k}=${text}`;
    })
    .join(' ');
}
