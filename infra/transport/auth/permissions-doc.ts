/**
 * @module
 * The "Identities" section of docs/protocol.md, rendered from the same
 * functions that mint the users (`permissions.ts`), so the document cannot
 * drift from what the broker enforces.
 */
import { MAX_CONNECTIONS_PER_AGENT, MAX_UNIDENTIFIED, SLOW_CONSUMER_BYTES } from '../socket-server.ts';
import {
  AGENT_MAX_SUBS,
  agentPermissions,
  BROWSER_INBOX_PREFIX,
  browserPermissions,
  inboxPrefixFor,
  operatorPermissions,
} from './permissions.ts';

const AGENT = "agent `<A>` (a worker's SKEIN_NATS_CREDS, `skein creds <A>`)";
const BROWSER = 'browser (the web console: `skein ui` hands it out for a one-time token)';
const OPERATOR = 'operator (`<data>/auth/operator.creds`: people, the CLI)';

export function identitiesSection(): string {
  const agent = agentPermissions('<A>');
  const operator = operatorPermissions();
  const browser = browserPermissions();
  const list = (subjects: string[] | undefined) => (subjects ?? []).map((s) => `\`${s}\``).join(', ') || '—';
  const row = (cells: Array<string | string[] | undefined>) =>
    `| ${cells.map((c) => (typeof c === 'string' ? c : list(c))).join(' | ')} |`;
  return `## Identities (enforced by nats-server, or by the embedded socket)

Every client presents NATS credentials (operator-mode JWTs: private broker, or networked after \`skein auth init\`);
nothing listens without them. The host mints users with the permissions below; anything not allowed is refused
**by the broker** with a permissions violation. In embedded mode a socket client's first frame is
\`{"op":"hello","token":…}\` (an agent's token, SKEIN_SOCKET_TOKEN, or \`<data>/auth/operator.token\`), and the
socket refuses what these same lists refuse, with a \`violation\` frame worded as nats-server words it.

| identity | publish allow | publish deny | subscribe allow | subscribe deny |
|---|---|---|---|---|
${row([AGENT, agent.pub.allow, 'everything else', agent.sub.allow, 'everything else'])}
${row([OPERATOR, operator.pub.allow, operator.pub.deny, operator.sub.allow, operator.sub.deny])}
${row([BROWSER, browser.pub.allow, 'everything else', browser.sub.allow, 'everything else'])}
| host | everything in the SKEIN account | — | everything in the SKEIN account | — |
| system (host only) | \`$SYS.REQ.ACCOUNT.<SKEIN>.CLAIMS.UPDATE\` (revocations) | | | |

- **Bounds.** An agent's user holds at most ${AGENT_MAX_SUBS} subscriptions (\`subs\` in its JWT; nats-server says
  \`maximum subscriptions exceeded\`). The embedded socket holds each connection to the same number (a
  \`Maximum Subscriptions Exceeded\` violation), cuts a client with over ${SLOW_CONSUMER_BYTES / 2 ** 20} MiB
  unread (a slow consumer), and refuses an agent's connection past ${MAX_CONNECTIONS_PER_AGENT}, agents' connections
  past a quarter of the runtime's open-files limit, and connections past ${MAX_UNIDENTIFIED} still waiting to
  present a token.
- **Reply inbox.** An agent connects with \`inboxPrefix: "${inboxPrefixFor('<A>')}"\` (nats.js); with the default
  \`_INBOX.\` its requests fail with a subscription violation. The host answers a command on
  \`skein.cmd.<A>.…\` only at \`_INBOX_<A>.…\` or \`_INBOX.…\`: one whose reply names any other subject (the
  broker never checks a reply subject, and the host's user may publish anywhere) is dropped unrun, as refused.
- **Subtree.** Subjects nest where a parent needs them, so permissions never grow after minting: a child's
  lifecycle facts are on its parent's \`skein.evt.<parent>.agent.<child>\`, and every ask is copied to
  \`skein.ask.<ancestor>.<requestId>\` for **each** ancestor, so a grandparent sees and answers
  (\`permission.decide\` on its own \`skein.cmd.<grandparent>.…\`; the host checks ancestry) a grandchild's ask.
  A descendant's terminal output and other facts are read through commands on the parent's own subjects
  (\`agent.tree\`, \`permission.pending\`, \`review.list\`), which the host answers for the subtree only.
  A child sees neither its parent nor its siblings.
- **The browser (web console)** watches every fact, output and ask, and may send only the commands listed:
  it *answers* an ask with \`permission.decide\` on the root's subject (the human at the root answers anything;
  the host checks ancestry as for any agent), reviews with \`review.*\`, and reads the log for time travel
  (stream info and ordered consumers on the two SKEIN streams; nothing that creates, changes or deletes a
  stream). Typing into a terminal is a \`terminal.write\` on the terminal's agent subject, so it passes the same
  gate as that agent's own input; it cannot \`terminal.exec\`/\`open\`/\`signal\`, touch files, spawn, cancel or
  set policy. Its inbox is \`${BROWSER_INBOX_PREFIX}\`. Each token exchange mints a fresh user that expires after 12 h.
- **End.** When an agent completes, fails or is cancelled, every user minted for it is put on the SKEIN account's
  revocation list (pushed through the system account): its connections close at once and reconnects are
  refused. No new credentials are minted for a finished agent. Agent users expire after 7 days.
- **The audit log.** Only the host may call \`$JS.API.>\` on the SKEIN_* streams or publish \`skein.evt.>\`, so a
  fact in the log was written by the host.
`;
}
