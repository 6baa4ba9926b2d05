/**
 * @module
 * nats-server's reading of user permissions, for the embedded socket, which
 * has no broker: the same allow/deny lists (`permissions.ts`) decide there,
 * so the two modes cannot drift. A publish is allowed when an allow pattern
 * matches its subject and no deny pattern does; a subscription when an
 * allow pattern covers the whole of its pattern (`skein.ask.>` is not inside
 * `skein.ask.A.>`) and no deny pattern covers it; a message matching a deny
 * pattern is not delivered to an allowed wider subscription.
 */
import type { Permissions } from '@nats-io/jwt';
import { subjectMatches } from '../bus.ts';

export type SubjectRules = Required<Pick<Permissions, 'pub' | 'sub'>>;

/**
 * The longest subject or pattern a socket client may name, in characters and in tokens. skein's own are at most
 * ~210 characters and 6 tokens (ids are 64 characters at most, schemas/subjects.ts); nats-server refuses a
 * control line over 4 KiB. Without a bound one agent subscribed 50 patterns of 1.4 MB (the runtime went 1.8 s per
 * publish) or 1,024 of them (1.6 GB held).
 */
export const MAX_SUBJECT_CHARS = 512;
export const MAX_SUBJECT_TOKENS = 16;

/** Why `subject` is too long for the socket, or undefined. */
export function subjectTooLong(subject: string): string | undefined {
  if (subject.length > MAX_SUBJECT_CHARS) return `over ${MAX_SUBJECT_CHARS} characters`;
  let tokens = 1;
  for (let i = 0; i < subject.length; i++) {
    if (subject.charCodeAt(i) === 46 && ++tokens > MAX_SUBJECT_TOKENS) return `over ${MAX_SUBJECT_TOKENS} tokens`;
  }
  return undefined;
}

/** Whether `subject` (a literal subject: wildcards cannot be published to) may be published to. */
export function mayPublish(rules: SubjectRules, subject: string): boolean {
  if (subject.split('.').some((t) => t === '*' || t === '>' || t === '')) return false;
  return matchesAny(rules.pub.allow, subject) && !matchesAny(rules.pub.deny, subject);
}

/** Whether a subscription to `pattern` is allowed (see the module doc). */
export function maySubscribe(rules: SubjectRules, pattern: string): boolean {
  if (pattern.split('.').some((t) => t === '')) return false;
  const allowed = (rules.sub.allow ?? []).some((allow) => covers(allow, pattern));
  return allowed && !(rules.sub.deny ?? []).some((deny) => covers(deny, pattern));
}

/** Whether a message on `subject` reaches an allowed subscription (deny patterns filter wider ones). */
export function mayReceive(rules: SubjectRules, subject: string): boolean {
  return !matchesAny(rules.sub.deny, subject);
}

function matchesAny(patterns: string[] | undefined, subject: string): boolean {
  return (patterns ?? []).some((p) => subjectMatches(p, subject));
}

/** Whether every subject `inner` matches is also matched by `outer`. */
export function covers(outer: string, inner: string): boolean {
  const o = outer.split('.');
  const i = inner.split('.');
  for (let k = 0; k < o.length; k++) {
    const token = o[k]!;
    if (token === '>') return i.length > k;
    if (k >= i.length) return false;
    if (token === '*') {
      if (i[k] === '>') return false;
      continue;
    }
    if (token !== i[k]) return false;
  }
  return o.length === i.length;
}
