/**
 * @module
 * Renders docs/protocol.md from the message catalogue: the subject grammar,
 * the envelopes, and every command (data, reply) and fact (data) as JSON
 * Schema. `npm run docs` writes it; a test fails when it is stale.
 */
import { identitiesSection } from '../transport/auth/permissions-doc.ts';
import { protocolSchema } from './schema.ts';
import { MAX_JSON_DEPTH, READ_SETTLE_MS } from '../../schemas/message.ts';
import { ISSUE_CHARS, ISSUES_SHOWN } from '../transport/wire.ts';

const HEADER = `# skein protocol

Generated from \`schemas/\` by \`npm run docs\` (the same JSON Schemas \`skein schema\` prints).
Do not edit by hand: a test compares this file with the generator.

## Subjects

\`\`\`
skein.cmd.<agentId>.<command type>             request/reply; one handler; may be refused
skein.evt.<agentId>.<aggregate>.<aggregateId>  facts; stream SKEIN_EVENTS
                                               (file storage, deny_delete, 2 min dedupe window)
skein.out.<agentId>.<terminalId>               terminal output chunks; stream SKEIN_OUTPUT (size-limited)
\`\`\`

- Every id is a token: 1-64 characters from \`[A-Za-z0-9_-]\`, so \`*\` and \`>\` line up with ids.
- \`<command type>\` is the command's type verbatim: \`agent.spawn\` on agent \`main\` is
  \`skein.cmd.main.agent.spawn\`.
- One subject per aggregate: the host appends with \`expect.lastSubjectSequence\` (one writer per aggregate),
  or, for a fact sent before the previous one of its subject is acked, \`expect.lastMsgID\` naming that fact;
  the stream gives the total order. A fact's \`agentId\` is the agent whose subjects carry it. An agent's own
  lifecycle facts travel under its **parent's** id (the root's under its own), so a parent watching
  \`skein.evt.<self>.>\` sees its children.
- Watch everything: \`nats sub 'skein.evt.>'\` (or \`skein tail\`).

## Sending a command

Request on \`skein.cmd.<agentId>.<type>\` with a JSON body; only \`data\` is needed:

\`\`\`json
{ "id": "optional-command-id", "data": { "label": "helper" } }
\`\`\`

\`type\` and \`agentId\` come from the subject; when the body has them they must agree (else
\`invalid_message\` / \`agent_mismatch\`). A key the envelope or the command's \`data\` does not have is
\`invalid_message\` naming it (a misspelt \`waitMs\` or option is never dropped silently). Command ids belong
to the sending agent: a repeated \`id\` gets the same reply and appends nothing twice (facts it caused have ids
\`<agentId>/<commandId>:<n>\`, JetStream msg-ids).
The reply is \`{ "ok": true, ...fields }\` or \`{ "ok": false, "error": { "code", "message", "retryable" } }\`,
sent only after every fact the command caused is durably in the log. A body nests objects and arrays at most
${MAX_JSON_DEPTH} levels deep (the body is level 1; a free-form value such as an agent's \`result\` is stored,
hashed into the digest and replayed): deeper is \`invalid_message\` naming the path.

Error codes: \`invalid_json\`, \`invalid_message\` (names the field path), \`invalid_subject\`, \`unknown_command\`,
\`unknown_agent\`, \`agent_mismatch\`, \`payload_too_large\`, \`not_found\`, \`conflict\`, \`invalid_state\`,
\`limit_exceeded\`, \`permission_denied\`, \`append_failed\` (retryable), \`unavailable\`, \`timeout\`, \`internal\`.
An \`invalid_message\` names at most ${ISSUES_SHOWN} of its issues (\`; and N more issues\`), each cut at ${ISSUE_CHARS}
characters (\`… (N more characters)\`): an issue can quote the body (an unknown key, a record's key in its path).

## Log and export format

The embedded log (\`<data>/events.jsonl\`) and \`skein replay --export\` write one line per fact:

\`\`\`json
{ "seq": 1, "subject": "skein.evt.main.agent.main",
  "fact": { "id", "type", "at", "agentId", "causationId", "data" } }
\`\`\`

## Streaming edits: the tool-call JSON

\`edit.begin\` names the path and the mode; the \`chunk\`s of \`edit.input\` are pieces of one JSON object, the
tool call as the model writes it, in any split; \`edit.finish\` parses it whole. Edit mode (the default):

\`\`\`json
{ "path": "src/a.ts", "edits": [{ "old_text": "return 1;", "new_text": "return 2;" }] }
\`\`\`

\`oldText\` / \`newText\` are accepted too, and \`edits\` may be a JSON string holding the array. Write mode
(\`"mode": "write"\`) replaces the whole file:

\`\`\`json
{ "path": "src/a.ts", "content": "export const a = 2;\\n" }
\`\`\`

\`path\` may be left out; when given it must name the file the edit began on (else nothing is written).
`;

export function renderProtocolDoc(): string {
  const schema = protocolSchema() as {
    envelopes: Record<string, unknown>;
    commands: Record<
      string,
      { summary: string; tool?: { tools: string[]; judged: boolean }; reads?: true; data: unknown; reply: unknown }
    >;
    events: Record<string, { summary: string; aggregate: string; stream: string; data: unknown }>;
  };
  const block = (value: unknown) => `\`\`\`json\n${JSON.stringify(strip(value), null, 2)}\n\`\`\``;
  const out = [HEADER, identitiesSection()];
  out.push('## Envelopes\n');
  for (const [name, value] of Object.entries(schema.envelopes)) out.push(`### ${name}\n\n${block(value)}\n`);
  out.push('## Commands\n');
  out.push('| type | summary |\n|---|---|');
  for (const [type, c] of Object.entries(schema.commands))
    out.push(`| \`${type}\` | ${c.summary}${toolNote(c.tool)}${c.reads ? READ_NOTE : ''} |`);
  out.push('');
  for (const [type, c] of Object.entries(schema.commands)) {
    out.push(
      `### \`${type}\`\n\n${c.summary}\n\ndata:\n\n${block(c.data)}\n\nreply ` +
        `fields (besides \`ok: true\`):\n\n${block(c.reply)}\n`,
    );
  }
  out.push('## Facts\n');
  out.push('| type | aggregate | stream | summary |\n|---|---|---|---|');
  for (const [type, e] of Object.entries(schema.events))
    out.push(`| \`${type}\` | ${e.aggregate} | ${e.stream} | ${e.summary} |`);
  out.push('');
  for (const [type, e] of Object.entries(schema.events))
    out.push(`### \`${type}\`\n\n${e.summary}\n\ndata:\n\n${block(e.data)}\n`);
  return `${out.join('\n').trimEnd()}\n`;
}

/** Drops `$schema` keys: noise repeated in every block. */
function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([k]) => k !== '$schema')
        .map(([k, v]) => [k, strip(v)]),
    );
  }
  return value;
}

/** What a `reads` command promises (`CommandDef.reads`). */
const READ_NOTE =
  ' (a read: answered once the facts the host had sent when it arrived are folded, waiting ' +
  `${READ_SETTLE_MS / 1000} s at most: a fact a client saw on \`skein.evt.>\` before asking is in the answer)`;

/** How a command passes the permission gate, as its CommandDef declares it. */
function toolNote(tool: { tools: string[]; judged: boolean } | undefined): string {
  if (!tool) return '';
  const names = tool.tools.map((t) => `\`${t}\``).join(' or ');
  return tool.judged
    ? ` (tool ${names}: passes the permission gate, which judges its input)`
    : ` (tool ${names}: passes the permission gate, which refuses a finished agent; no input is judged)`;
}
