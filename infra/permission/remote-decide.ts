/**
 * @module
 * Named hosts: a permission request waits on the host where its agent lives
 * (the call is there), but the ancestor who answers may be served by another
 * host. That host forwards the answer on `skein.host.<owner>.permission.decide`
 * to the owner, which decides exactly as for a local answer (the ancestor
 * check included) and replies with the outcome.
 */
import * as z from 'zod';
import type { Logger } from 'pino';
import { ErrorCode, RuntimeError, toErrorInfo, type AgentId, type UnstampedFact } from '../../schemas/index.ts';
import { DecisionAnswer } from '../../schemas/permission.ts';
import type { DecideReply, PermissionService } from '../../actors/permission/policy-service.ts';
import type { Bus } from '../transport/bus.ts';
import type { Host } from '../kernel/host.ts';

/** Host-to-host: never an agent's subject (agents may publish only `skein.cmd.<self>.>`). */
export function decideSubject(host: string): string {
  return `skein.host.${host}.permission.decide`;
}

const Forwarded = z
  .object({
    requestId: z.string(),
    decision: DecisionAnswer,
    pattern: z.string().optional(),
    decidedBy: z.string(),
    commandId: z.string(),
  })
  .strict();
type Forwarded = z.infer<typeof Forwarded>;

/** How long the answering host waits for the owner's outcome, in ms. */
const FORWARD_TIMEOUT_MS = 10_000;

/** On the owner: answers forwarded decisions for the requests of its agents. */
export function serveRemoteDecide(deps: {
  bus: Bus;
  host: Host;
  service: PermissionService;
  name: string;
  logger: Logger;
}): () => void {
  const sub = deps.bus.subscribe(decideSubject(deps.name), (msg) => {
    void (async () => {
      let reply: unknown;
      try {
        const f = Forwarded.parse(JSON.parse(new TextDecoder().decode(msg.data)));
        const decided = await deps.service.decide({
          requestId: f.requestId,
          decision: f.decision,
          ...(f.pattern === undefined ? {} : { pattern: f.pattern }),
          decidedBy: f.decidedBy,
          emit: (fact) =>
            deps.host.emit(fact as UnstampedFact, {
              agentId: (fact.agentId ?? f.decidedBy) as AgentId,
              causationId: f.commandId,
            }),
        });
        reply = { ok: true, ...decided };
      } catch (err) {
        deps.logger.warn({ err: toErrorInfo(err) }, 'forwarded permission answer refused');
        reply = { ok: false, error: toErrorInfo(err) };
      }
      if (msg.reply) msg.respond(JSON.stringify(reply));
    })();
  });
  return () => sub.unsubscribe();
}

/** On the answering host: sends the decision to the owner and returns its outcome (or throws its error). */
export async function forwardDecide(bus: Bus, owner: string, forwarded: Forwarded): Promise<DecideReply> {
  let bytes: Uint8Array;
  try {
    bytes = await bus.request(decideSubject(owner), JSON.stringify(forwarded), { timeoutMs: FORWARD_TIMEOUT_MS });
  } catch (err) {
    throw new RuntimeError(
      ErrorCode.Unavailable,
      `request '${forwarded.requestId}' waits on host '${owner}', which did not take the answer ` +
        `(${(err as Error).message}); retry when that host is back`,
      { retryable: true, cause: err },
    );
  }
  const reply = JSON.parse(new TextDecoder().decode(bytes)) as
    | ({ ok: true } & DecideReply)
    | { ok: false; error: { code: string; message: string; retryable?: boolean } };
  if (!reply.ok) {
    throw new RuntimeError(reply.error.code, reply.error.message, { retryable: reply.error.retryable ?? false });
  }
  const { ok: _ok, ...decided } = reply;
  return decided;
}
