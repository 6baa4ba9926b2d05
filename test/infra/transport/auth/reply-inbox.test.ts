import { describe, expect, it } from 'vitest';
import { isReplyInbox, replyAllowedFor } from '../../../../infra/transport/auth/permissions.ts';

describe('which reply subjects the host answers on', () => {
  it.each([
    ['_INBOX.abc.1', true],
    ['_INBOX.console.x.2', true],
    ['_INBOX_a.K3J.7', true],
    ['_INBOX_a-1_b.z', true],
    ['_INBOX', false],
    ['_INBOX.', false],
    ['_INBOX..x', false],
    ['_INBOX.x.', false],
    ['_INBOX.*', false],
    ['_INBOX.>', false],
    ['_INBOX.a b', false],
    ['_INBOX_.x', false],
    ['_INBOXES.x', false],
    ['skein.cmd.b.agent.cancel', false],
    ['skein.evt.main.agent.b', false],
    ['$JS.API.STREAM.PURGE.SKEIN_EVENTS', false],
    ['x._INBOX.y', false],
  ])('%s is an inbox: %s', (reply, inbox) => {
    expect(isReplyInbox(reply)).toBe(inbox);
  });

  it("takes an unrestricted client's inbox or the agent's own, never another agent's", () => {
    expect(replyAllowedFor('_INBOX.abc.1', 'a')).toBe(true);
    expect(replyAllowedFor('_INBOX_a.abc.1', 'a')).toBe(true);
    expect(replyAllowedFor('_INBOX_b.abc.1', 'a')).toBe(false);
    expect(replyAllowedFor('_INBOX_ab.abc.1', 'a')).toBe(false);
    expect(replyAllowedFor('skein.cmd.a.runtime.ping', 'a')).toBe(false);
  });
});
