/**
 * The embedded socket's reading of the broker's permission lists
 * (`subject-rules.ts`): one line per rule, after nats-server's behaviour
 * seen in identity.integration.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { agentPermissions, operatorPermissions } from '../../../../infra/transport/auth/permissions.ts';
import { covers, mayPublish, mayReceive, maySubscribe } from '../../../../infra/transport/auth/subject-rules.ts';

const a = agentPermissions('a');
const operator = operatorPermissions();

describe('subject rules', () => {
  it.each([
    ['own command', a, 'skein.cmd.a.agent.get', true],
    ["another agent's command", a, 'skein.cmd.b.agent.get', false],
    ["main's policy.set", a, 'skein.cmd.main.policy.set', false],
    ['a prefix trick', a, 'skein.cmd.ab.agent.get', false],
    ['a fact', a, 'skein.evt.a.agent.a', false],
    ['a wildcard subject', a, 'skein.cmd.a.*', false],
    ['an empty token', a, 'skein.cmd.a..x', false],
    ['JetStream API', a, '$JS.API.STREAM.INFO.SKEIN_EVENTS', false],
    ['operator: any command', operator, 'skein.cmd.b.agent.get', true],
    ['operator: a fact', operator, 'skein.evt.main.agent.a', false],
    ['operator: stream delete', operator, '$JS.API.STREAM.DELETE.SKEIN_EVENTS', false],
  ] as const)('publish: %s', (_name, rules, subject, allowed) => {
    expect(mayPublish(rules, subject)).toBe(allowed);
  });

  it.each([
    ['own facts', a, 'skein.evt.a.>', true],
    ['one of its own facts', a, 'skein.evt.a.agent.a', true],
    ['own inbox', a, '_INBOX_a.x', true],
    ["another's output", a, 'skein.out.b.>', false],
    ['every ask', a, 'skein.ask.>', false],
    ['a wildcard agent', a, 'skein.evt.*.>', false],
    ['everything', a, '>', false],
    ['operator: everything (deny filters $SYS)', operator, '>', true],
    ['operator: $SYS', operator, '$SYS.>', false],
  ] as const)('subscribe: %s', (_name, rules, pattern, allowed) => {
    expect(maySubscribe(rules, pattern)).toBe(allowed);
  });

  it('filters denied subjects out of a wider allowed subscription', () => {
    expect(mayReceive(operator, '$SYS.ACCOUNT.x')).toBe(false);
    expect(mayReceive(operator, 'skein.evt.a.agent.a')).toBe(true);
  });

  it.each([
    ['a.>', 'a.b.c', true],
    ['a.>', 'a', false],
    ['a.*', 'a.>', false],
    ['a.*.c', 'a.*.c', true],
    ['a.b.>', 'a.*.>', false],
    ['>', 'x.>', true],
  ] as const)('%s covers %s: %s', (outer, inner, result) => {
    expect(covers(outer, inner)).toBe(result);
  });
});
