/**
 * @module
 * The one place NATS subjects are built and read back. Grammar:
 *
 * ```
 * skein.cmd.<agentId>.<command type…>            request/reply; one handler; may be refused
 * skein.evt.<agentId>.<aggregate>.<aggregateId>  facts; stream SKEIN_EVENTS (one subject per aggregate)
 * skein.out.<agentId>.<terminalId>               terminal output chunks; stream SKEIN_OUTPUT (size-limited)
 * skein.ask.<agentId>.<requestId>                permission requests of the agent's subtree awaiting an answer
 *                                                (a copy of permission.requested for each ancestor; not stored)
 * ```
 *
 * `<command type…>` is the command's type verbatim (`agent.spawn` →
 * `skein.cmd.main.agent.spawn`). Every id is a token (`[A-Za-z0-9_-]{1,64}`),
 * so `*` and `>` line up with ids: `skein.evt.main.>` is everything of agent
 * `main`, `skein.evt.*.terminal.>` every terminal fact.
 */
import { TOKEN_PATTERN } from './ids.ts';
import { TYPE_PATTERN } from './message.ts';

export const SUBJECT_ROOT = 'skein';
export const EVENTS_STREAM = 'SKEIN_EVENTS';
export const OUTPUT_STREAM = 'SKEIN_OUTPUT';

export type SubjectSpec =
  | { kind: 'cmd'; agentId: string; type: string }
  | { kind: 'evt'; agentId: string; aggregate: string; aggregateId: string }
  | { kind: 'out'; agentId: string; terminalId: string }
  | { kind: 'ask'; agentId: string; requestId: string };

/** Builds a subject; throws on a part that is not a valid token or type. */
export function subjectFor(spec: SubjectSpec): string {
  token(spec.agentId, 'agentId');
  switch (spec.kind) {
    case 'cmd':
      if (!TYPE_PATTERN.test(spec.type)) throw new Error(`command type '${spec.type}' is not lowercase dotted words`);
      return `${SUBJECT_ROOT}.cmd.${spec.agentId}.${spec.type}`;
    case 'evt':
      token(spec.aggregate, 'aggregate');
      token(spec.aggregateId, 'aggregateId');
      return `${SUBJECT_ROOT}.evt.${spec.agentId}.${spec.aggregate}.${spec.aggregateId}`;
    case 'out':
      token(spec.terminalId, 'terminalId');
      return `${SUBJECT_ROOT}.out.${spec.agentId}.${spec.terminalId}`;
    case 'ask':
      token(spec.requestId, 'requestId');
      return `${SUBJECT_ROOT}.ask.${spec.agentId}.${spec.requestId}`;
  }
}

/** Subscription patterns, built here too so the grammar lives in one file. */
export const subjectPatterns = {
  allCommands: `${SUBJECT_ROOT}.cmd.>`,
  allEvents: `${SUBJECT_ROOT}.evt.>`,
  allOutput: `${SUBJECT_ROOT}.out.>`,
  agentEvents: (agentId: string) => `${SUBJECT_ROOT}.evt.${token(agentId, 'agentId')}.>`,
  agentOutput: (agentId: string) => `${SUBJECT_ROOT}.out.${token(agentId, 'agentId')}.>`,
  agentAsks: (agentId: string) => `${SUBJECT_ROOT}.ask.${token(agentId, 'agentId')}.>`,
};

/** Reads `skein.cmd.<agentId>.<type>` back; `undefined` when the subject is not of that shape. */
export function parseCommandSubject(subject: string): { agentId: string; type: string } | undefined {
  const parts = subject.split('.');
  if (parts.length < 5 || parts[0] !== SUBJECT_ROOT || parts[1] !== 'cmd') return undefined;
  return { agentId: parts[2]!, type: parts.slice(3).join('.') };
}

/** Reads `skein.evt.<agentId>.<aggregate>.<aggregateId>` back. */
export function parseEventSubject(
  subject: string,
): { agentId: string; aggregate: string; aggregateId: string } | undefined {
  const parts = subject.split('.');
  if (parts.length !== 5 || parts[0] !== SUBJECT_ROOT || parts[1] !== 'evt') return undefined;
  return { agentId: parts[2]!, aggregate: parts[3]!, aggregateId: parts[4]! };
}

export function isToken(value: string): boolean {
  return TOKEN_PATTERN.test(value);
}

function token(value: string, name: string): string {
  if (!TOKEN_PATTERN.test(value)) {
    throw new Error(`${name} '${value}' is not a subject token: expected 1-64 characters from [A-Za-z0-9_-]`);
  }
  return value;
}
