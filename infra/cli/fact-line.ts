/**
 * @module
 * One readable line per fact, for `skein tail` and `skein replay` (each type's `describe`, from the
 * catalogue).
 */
import { eventsByType, type Fact } from '../../schemas/index.ts';

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
