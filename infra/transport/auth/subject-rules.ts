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
