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
 * - browser (the web console, `skein ui`): watches everything, answers asks,
 *   reviews, reads the log, and types into terminals only through the gated
 *   `terminal.write`; it cannot run anything as an agent.
 * - host: unrestricted in the application account.
 */
import type { Permissions } from '@nats-io/jwt';
import { EVENTS_STREAM, OUTPUT_STREAM } from '../../../schemas/index.ts';

/** The reply-inbox prefix an agent's connection must use (nats.js `inboxPrefix`). */
export function inboxPrefixFor(agentId: string): string {
  return `_INBOX_${agentId}`;
}

/**
 * Where the host's JetStream appends are acknowledged: never a reply inbox (`isReplyInbox`), so no command's
 * answer can be sent there, and denied to operators' publishes, so no ack can be forged.
 */
export const HOST_ACK_INBOX = '_SKEIN_ACK';

/**
 * Whether `reply` is a reply inbox at all: `_INBOX.` (unrestricted clients: the CLI, the host's own, the web
 * console's `_INBOX.console.`) or `_INBOX_<agent>.` (an agent's), one literal subject. The broker checks what a
 * client publishes, never the reply subject it names; the host publishes its answers unrestricted, so an answer
 * sent wherever a request said would let an agent publish, through the host, on any subject: another agent's
 * commands, the log's fact subjects.
 */
export function isReplyInbox(reply: string): boolean {
  return /^_INBOX(_[A-Za-z0-9_-]+)?\.[^\s*>]+$/.test(reply) && !reply.split('.').includes('');
}

/**
 * Whether the host answers a command on `skein.cmd.<agentId>.…` at `reply`: an unrestricted client's inbox
 * (`_INBOX.`) or the agent's own (`_INBOX_<agentId>.`), never another agent's (`isReplyInbox`).
 */
export function replyAllowedFor(reply: string, agentId: string): boolean {
  if (!isReplyInbox(reply)) return false;
  return reply.startsWith('_INBOX.') || reply.startsWith(`${inboxPrefixFor(agentId)}.`);
}

/**
 * Subscriptions one agent user may hold at once on the broker; nats-server refuses more (`maximum subscriptions
 * exceeded`). Each costs the broker's memory, and an agent may subscribe as often as it publishes. The embedded
 * socket holds each connection to the same number (socket-server.ts).
 */
export const AGENT_MAX_SUBS = 1_024;

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

/**
 * The operator user: reads everything and sends any command; never writes facts or alters the log, and never
 * speaks host to host (`skein.host.>`: forwarded answers, placed workers' starts with their env).
 */
export function operatorPermissions(): Required<Pick<Permissions, 'pub' | 'sub'>> {
  return {
    pub: {
      allow: ['>'],
      deny: [
        'skein.evt.>',
        'skein.out.>',
        'skein.ask.>',
        'skein.host.>',
        `${HOST_ACK_INBOX}.>`,
        '$SYS.>',
        ...STREAM_MUTATIONS,
      ],
    },
    sub: { allow: ['>'], deny: ['$SYS.>'] },
  };
}

/** The reply-inbox prefix of the web console's connections (a `.` keeps it apart from every `_INBOX_<agent>`). */
export const BROWSER_INBOX_PREFIX = '_INBOX.console';

/**
 * Commands the web console may send, on any agent's subject. `permission.decide` is how a human answers an
 * ask (on the root's subject, the host checks ancestry); `terminal.write` passes the gate exactly as the
 * agent's own would (judged as that agent's `terminal_input`); `terminal.resize` runs nothing. Everything
 * that runs or changes something as an agent (`terminal.exec`/`open`/`signal`, `file.*`, `edit.*`,
 * `agent.spawn`/`cancel`, `policy.set`) is not here, so the broker refuses it.
 */
export const BROWSER_COMMANDS = [
  'agent.tree',
  'agent.get',
  'permission.pending',
  'permission.decide',
  'review.list',
  'review.accept',
  'review.reject',
  'review.undo-reject',
  'terminal.list',
  'terminal.write',
  'terminal.resize',
] as const;

/** Read-only JetStream calls on the log's streams (stream info, ordered consumers): time travel reads the log. */
function logReads(stream: string): string[] {
  return [
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.INFO.${stream}.>`,
    `$JS.API.CONSUMER.DELETE.${stream}.>`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.>`,
  ];
}

/** The web console: watch facts, output and asks; answer, review, type through the gate; read the log. */
export function browserPermissions(): Required<Pick<Permissions, 'pub' | 'sub'>> {
  return {
    pub: {
      allow: [
        ...BROWSER_COMMANDS.map((type) => `skein.cmd.*.${type}`),
        '$JS.API.INFO',
        ...logReads(EVENTS_STREAM),
        ...logReads(OUTPUT_STREAM),
      ],
    },
    sub: { allow: ['skein.evt.>', 'skein.out.>', 'skein.ask.>', `${BROWSER_INBOX_PREFIX}.>`] },
  };
}
