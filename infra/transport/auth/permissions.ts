/**
 * @module
 * What each identity on the bus may publish and subscribe to, as NATS user
 * permissions. The broker enforces these; skein's own checks come after.
 *
 * - agent A: publish `skein.cmd.A.>` only; subscribe to its own facts, output
 *   and asks and its own reply inbox `_INBOX_A.>`. Its subtree is visible
 *   because subjects nest where a parent needs them: a child's lifecycle facts
 *   are on the parent's `skein.evt.<parent>.agent.<child>`, and every ask is
 *   copied to `skein.ask.<ancestor>.…` for each ancestor, so a grandparent
 *   answers a grandchild's ask on its own subjects (`permission.decide` on
 *   `skein.cmd.<grandparent>.…`, the host checks ancestry). Permissions never
 *   grow after minting, so a live connection never needs new credentials.
 * - operator (people, the CLI): anything but writing facts, `$SYS`, and the
 *   JetStream calls that change or delete a stream or its messages.
 * - host: unrestricted in the application account.
 */
import type { Permissions } from '@nats-io/jwt';

/** The reply-inbox prefix an agent's connection must use (nats.js `inboxPrefix`). */
export function inboxPrefixFor(agentId: string): string {
  return `_INBOX_${agentId}`;
}

/** The publish/subscribe allow lists of agent `agentId`. Anything not listed is refused by the broker. */
export function agentPermissions(agentId: string): Required<Pick<Permissions, 'pub' | 'sub'>> {
  return {
    pub: { allow: [`skein.cmd.${agentId}.>`] },
    sub: {
      allow: [
        `skein.evt.${agentId}.>`,
        `skein.out.${agentId}.>`,
        `skein.ask.${agentId}.>`,
        `${inboxPrefixFor(agentId)}.>`,
      ],
    },
  };
}

/** JetStream API calls that change a stream or drop its messages: only the host may make them. */
export const STREAM_MUTATIONS = [
  '$JS.API.STREAM.CREATE.>',
  '$JS.API.STREAM.UPDATE.>',
  '$JS.API.STREAM.DELETE.>',
  '$JS.API.STREAM.PURGE.>',
  '$JS.API.STREAM.MSG.DELETE.>',
  '$JS.API.STREAM.RESTORE.>',
  '$JS.API.STREAM.SNAPSHOT.>',
  '$JS.API.STREAM.PEER.>',
  '$JS.API.STREAM.LEADER.>',
  '$JS.API.ACCOUNT.PURGE.>',
  '$JS.API.META.>',
];

/** The operator user: reads everything and sends any command; never writes facts or alters the log. */
export function operatorPermissions(): Required<Pick<Permissions, 'pub' | 'sub'>> {
  return {
    pub: { allow: ['>'], deny: ['skein.evt.>', 'skein.out.>', 'skein.ask.>', '$SYS.>', ...STREAM_MUTATIONS] },
    sub: { allow: ['>'], deny: ['$SYS.>'] },
  };
}
