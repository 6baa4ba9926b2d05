/**
 * @module
 * Confirm-level permission requests as MCP elicitations. While a tool call
 * runs, requests of the session agent (appended under its own subjects) and
 * of its sub-agents (copied to `skein.ask.<agent>.*`) are shown to the
 * person at the MCP client as allow once / always / deny, with the exact
 * command or the diff/content; the answer goes back as `permission.decide`
 * from an agent entitled to answer. A client without elicitation, or a
 * request that arrives with no call running, is left to skein's usual paths
 * (`skein approvals`, the parent agent); the call then simply waits.
 */
import type { Logger } from 'pino';
import { reveal } from '../../machines/common/reveal.ts';
import { ASK_DETAIL_NAMES, detailCut } from '../../schemas/ask-labels.ts';
import type { RequestId } from '../../schemas/ids.ts';
import type { PermissionRequestedData } from '../../schemas/permission.ts';
import { subjectPatterns } from '../../schemas/subjects.ts';
import type { SkeinClient } from '../client/index.ts';
import { decodeFact } from '../transport/codec.ts';
import { callOf } from './call-scope.ts';

/** Agent text in an elicitation: format and control characters (but newline and tab) as codes. */
const shown = (text: string): string => reveal(text, { controls: true });

/** The three answers offered; `deny` denies once (a learned deny rule is a policy edit, not a click). */
export const ELICIT_CHOICES = [
  { const: 'allow_once', title: 'Allow once' },
  { const: 'allow_always', title: 'Always allow (learns a rule)' },
  { const: 'deny_once', title: 'Deny' },
] as const;

export type ElicitAnswer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> | undefined };

/** What a running tool call offers to show a request to its client; undefined when the client cannot. */
export type Elicitor = (message: string, schema: ElicitSchema) => Promise<ElicitAnswer>;

export type ElicitSchema = {
  type: 'object';
  properties: { decision: { type: 'string'; title: string; oneOf: Array<{ const: string; title: string }> } };
  required: ['decision'];
};

const SCHEMA: ElicitSchema = {
  type: 'object',
  properties: { decision: { type: 'string', title: 'Decision', oneOf: ELICIT_CHOICES.map((c) => ({ ...c })) } },
  required: ['decision'],
};

/**
 * The text a person sees: who asks, for what tool, the exact input, the request's own detail (a write's
 * content, an edit's old and new text: what the gate recorded with this request, never text matched by path),
 * why, and what "always" would learn. Agent text goes through `shown` (format and control characters as codes);
 * a detail the gate cut says so before it.
 */
export function describeRequest(r: PermissionRequestedData): string {
  const always = r.options.find((o) => o.decision === 'allow_always')?.pattern;
  const lines = [`skein: agent '${r.agentId}' asks to use ${r.tool}:`, '', shown(r.input)];
  if (r.subCommands.length > 1) lines.push(`parts: ${shown(JSON.stringify(r.subCommands))}`);
  if (r.detail !== undefined) {
    const label = ASK_DETAIL_NAMES[r.tool] ?? 'detail';
    const cut = detailCut(r.detail);
    lines.push('');
    if (cut !== undefined) {
      lines.push(
        `Only the start of the ${label} is shown: ${cut} more characters are not. Allowing allows them unseen.`,
      );
    }
    lines.push(`${label}:`, shown(r.detail));
  }
  lines.push('', `why it asks: ${shown(r.reason)}`);
  if (always) lines.push(`"Always allow" adds the ${r.tool} rule ${shown(always)}`);
  lines.push(`unanswered, it is denied at ${r.deadline}`);
  return lines.join('\n');
}

export class ApprovalBridge {
  readonly #client: SkeinClient;
  readonly #agentId: string;
  readonly #parentId: string | null;
  readonly #logger: Logger;
  readonly #calls: Elicitor[] = [];
  readonly #seen = new Set<string>();
  /** Per tool call running now (by its tag, `call-scope.ts`): the requests its commands raised, and its cancel. */
  readonly #running = new Map<string, { raised: Set<string>; cancelled: boolean; elicit: Elicitor | undefined }>();
  readonly #unsubscribe: Array<() => void> = [];

  constructor(options: { client: SkeinClient; agentId: string; parentId: string | null; logger: Logger }) {
    this.#client = options.client;
    this.#agentId = options.agentId;
    this.#parentId = options.parentId;
    this.#logger = options.logger;
    const bus = this.#client.bus;
    const onFact = (subject: string, data: Uint8Array) => {
      try {
        const fact = decodeFact(subject, data);
        if (fact.type === 'permission.requested') {
          this.#onRequest(fact.data as PermissionRequestedData, callOf(fact.causationId));
        }
      } catch {
        // Not a fact this catalogue reads: not ours to answer.
      }
    };
    // Own requests are appended under the requester's subjects; sub-agents' are copied to our ask subject.
    const own = bus.subscribe(`skein.evt.${this.#agentId}.permission.*`, (m) => onFact(m.subject, m.data));
    const asks = bus.subscribe(subjectPatterns.agentAsks(this.#agentId), (m) => onFact(m.subject, m.data));
    this.#unsubscribe.push(
      () => own.unsubscribe(),
      () => asks.unsubscribe(),
    );
  }

  /**
   * Runs `work`, the tool call `tag`, with `elicit` as the way to ask the person; requests during it are shown
   * there. When `signal` aborts (the client cancelled the call), the requests its own commands raised, before or
   * after the cancel, are withdrawn (`permission.withdraw`: denied, by: cancelled): the tool gave up on them,
   * and one approved later in `skein approvals` would run with nobody waiting. A request is the call's when its
   * `causationId` is a command the call sent (`call-scope.ts`): other calls, of this session or another one
   * acting as the same agent, keep theirs.
   */
  async during<T>(elicit: Elicitor | undefined, work: () => Promise<T>, tag: string, signal?: AbortSignal): Promise<T> {
    const call = { raised: new Set<string>(), cancelled: false, elicit };
    const onAbort = () => {
      call.cancelled = true;
      for (const requestId of call.raised) this.#withdraw(requestId);
    };
    this.#running.set(tag, call);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (elicit) this.#calls.push(elicit);
    try {
      return await work();
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.#running.delete(tag);
      if (elicit) this.#calls.splice(this.#calls.indexOf(elicit), 1);
    }
  }

  close(): void {
    for (const u of this.#unsubscribe.splice(0)) u();
  }

  #onRequest(r: PermissionRequestedData, tag: string | undefined): void {
    const mine = r.agentId === this.#agentId || r.ancestors.includes(this.#agentId as never);
    if (!mine || this.#seen.has(r.requestId)) return;
    this.#seen.add(r.requestId);
    const call = r.agentId === this.#agentId && tag !== undefined ? this.#running.get(tag) : undefined;
    if (call) {
      call.raised.add(r.requestId);
      if (call.cancelled) return this.#withdraw(r.requestId);
    }
    // Asked in the call that raised it; a sub-agent's, in the latest call.
    const elicit = call ? call.elicit : this.#calls.at(-1);
    if (!elicit) {
      this.#logger.info({ requestId: r.requestId }, 'permission request left to skein approvals: no call to ask in');
      return;
    }
    void this.#ask(elicit, r);
  }

  /** Withdraws our own request `requestId` (denied, by: cancelled; nothing when it was answered meanwhile). */
  #withdraw(requestId: string): void {
    this.#client
      .agent(this.#agentId)
      .permission.withdraw({ requestId: requestId as RequestId })
      .then(
        () => this.#logger.info({ requestId }, 'permission request withdrawn: the client cancelled its call'),
        (err: unknown) => this.#logger.warn({ err, requestId }, 'withdrawing a permission request failed'),
      );
  }

  async #ask(elicit: Elicitor, r: PermissionRequestedData): Promise<void> {
    const message = describeRequest(r);
    let answer: ElicitAnswer;
    try {
      answer = await elicit(message, SCHEMA);
    } catch (err) {
      // The client failed or timed out the elicitation: the request stays pending for skein's usual paths.
      this.#logger.warn({ err, requestId: r.requestId }, 'elicitation failed; request left pending');
      return;
    }
    const choice = answer.action === 'accept' ? String(answer.content?.['decision'] ?? '') : 'deny_once';
    const decision = ELICIT_CHOICES.some((c) => c.const === choice) ? choice : 'deny_once';
    // Our own request is answered by our parent (the person at the client stands for it); a root agent
    // answers for itself as "the user", and a sub-agent's request by us, its ancestor.
    const decider = r.agentId === this.#agentId ? (this.#parentId ?? this.#agentId) : this.#agentId;
    try {
      await this.#client.agent(decider).permission.decide({
        requestId: r.requestId,
        decision: decision as 'allow_once' | 'allow_always' | 'deny_once',
      });
    } catch (err) {
      this.#logger.warn({ err, requestId: r.requestId }, 'permission.decide failed');
    }
  }
}
