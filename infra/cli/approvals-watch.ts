/**
 * @module
 * `skein approvals --watch`: follows the permission requests of the agent (the root unless --agent) and its
 * subtree as they arrive, shows each one (the exact command or path, a write's content or an edit's old and
 * new text, a spawn's task and policy, and the exact rule "always" would learn) and answers it from one line
 * typed in reply: `y` (allow once), `n` (deny), `a` (always). On a TTY it prompts; otherwise each ask is one
 * JSON line on stdout and answers are read from stdin lines, so a script (or a test) can drive it. Ctrl-C and
 * the end of stdin exit quietly.
 */
import { reveal } from '../../machines/common/reveal.ts';
import { createInterface } from 'node:readline';
import { subjectPatterns } from '../../schemas/index.ts';
import { PermissionRequested, type PermissionRequestedData } from '../../schemas/permission.ts';
import { call, type Client } from '../transport/client.ts';
import { EXIT } from './output.ts';
import { ASK_DETAIL_NAMES, ASK_INPUT_NAMES, detailCut } from '../../schemas/ask-labels.ts';

type Answer = 'allow_once' | 'allow_always' | 'deny_once';
const ANSWERS: Record<string, Answer> = {
  y: 'allow_once',
  yes: 'allow_once',
  n: 'deny_once',
  no: 'deny_once',
  a: 'allow_always',
  always: 'allow_always',
};

/** The rule an "always" answer would learn, or undefined when the request offers only yes/no. */
export function alwaysRule(ask: PermissionRequestedData): string | undefined {
  return ask.options.find((o) => o.decision === 'allow_always' && o.pattern !== undefined)?.pattern;
}

/** An ask as a person reads it on a terminal: every field verbatim, indented under its name. */
export function askBlock(ask: PermissionRequestedData, asRoot: boolean): string {
  const indent = (text: string) =>
    text
      .split('\n')
      .map((l) => `    │ ${l}`)
      .join('\n');
  const rule = alwaysRule(ask);
  const lines = [
    `── ${ask.requestId} from ${ask.agentId} (${ask.tool}) ──`,
    `  ${ask.reason}`,
    `  ${ASK_INPUT_NAMES[ask.tool] ?? 'input'}:`,
    indent(ask.input),
  ];
  if (ask.subCommands.length > 1) lines.push(`  sub-commands: ${JSON.stringify(ask.subCommands)}`);
  lines.push(...askDetail(ask, '  '));
  lines.push(
    rule === undefined
      ? '  always: not offered for this request (yes or no only)'
      : `  always would learn: ${ask.tool}.always_allow ${JSON.stringify(rule)}` +
          (asRoot ? '' : ' (only an answer as the root learns a rule; as a parent it allows once)'),
    `  denied automatically at ${ask.deadline}`,
  );
  return lines.join('\n');
}

/**
 * An ask's detail (a write's content, an edit's old and new text…) under its name, each line verbatim after
 * `│`, and first a note when the gate cut it; no lines when it has none. `pad` goes before each line. Not yet
 * revealed: the caller reveals the whole text it prints.
 */
export function askDetail(ask: PermissionRequestedData, pad: string): string[] {
  if (ask.detail === undefined) return [];
  const cut = detailCut(ask.detail);
  const name = ASK_DETAIL_NAMES[ask.tool] ?? 'detail';
  return [
    ...(cut === undefined ? [] : [`${pad}(only the start of the ${name}: ${cut} more characters are not shown)`]),
    `${pad}${name}:`,
    ...ask.detail.split('\n').map((l) => `${pad}  │ ${l}`),
  ];
}

/** An ask as one JSON line (non-TTY): the fields a script needs to decide, and the rule "always" learns. */
export function askLine(ask: PermissionRequestedData): string {
  const { requestId, agentId, tool, input, reason, detail, deadline } = ask;
  return JSON.stringify({ requestId, agentId, tool, input, reason, detail, always: alwaysRule(ask) ?? null, deadline });
}

/** Follows and answers asks until stdin ends or SIGINT; returns the exit code. */
export async function watchApprovals(client: Client, agentId: string, asRoot: boolean): Promise<number> {
  const tty = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const asks: PermissionRequestedData[] = [];
  const seen = new Set<string>();
  let wake: (() => void) | undefined;
  const offer = (ask: PermissionRequestedData) => {
    if (seen.has(ask.requestId) || (ask.agentId !== agentId && !(ask.ancestors as string[]).includes(agentId))) return;
    seen.add(ask.requestId);
    asks.push(ask);
    wake?.();
  };
  const onMessage = (msg: { data: Uint8Array }) => {
    try {
      const fact = JSON.parse(new TextDecoder().decode(msg.data)) as { type?: string; data?: unknown };
      if (fact.type !== 'permission.requested') return;
      const parsed = PermissionRequested.data.safeParse(fact.data);
      if (parsed.success) offer(parsed.data);
    } catch {
      // not a message we can read: ignore it
    }
  };
  // Its own requests are facts on its subjects; its subtree's are copied to its ask subjects.
  const subs = [
    client.bus.subscribe(subjectPatterns.agentAsks(agentId), onMessage),
    client.bus.subscribe(subjectPatterns.agentEvents(agentId), onMessage),
  ];
  const pending = await call(client.bus, agentId, 'permission.pending', {}, { timeoutMs: 10_000 });
  if (!pending.ok) {
    process.stderr.write(`skein: ${pending.error.message}\n`);
    return EXIT.failed;
  }
  for (const r of pending['requests'] as PermissionRequestedData[]) offer(r);

  const rl = createInterface({ input: process.stdin, terminal: tty });
  const lines: string[] = [];
  let ended = false;
  rl.on('line', (l) => {
    lines.push(l);
    wake?.();
  });
  const end = () => {
    ended = true;
    wake?.();
  };
  rl.on('close', end);
  rl.on('SIGINT', () => rl.close());
  process.once('SIGINT', end);
  process.once('SIGTERM', end);
  const next = async <T>(take: () => T | undefined): Promise<T | undefined> => {
    for (;;) {
      const v = take();
      if (v !== undefined || ended) return v;
      await new Promise<void>((r) => (wake = r));
      wake = undefined;
    }
  };
  if (tty) process.stderr.write(`watching permission requests for ${agentId} and its subtree (Ctrl-C to stop)\n`);
  try {
    for (;;) {
      const ask = await next(() => asks.shift());
      if (!ask) return EXIT.ok;
      const still = await call(client.bus, agentId, 'permission.pending', {}, { timeoutMs: 10_000 });
      if (still.ok && !(still['requests'] as PermissionRequestedData[]).some((r) => r.requestId === ask.requestId))
        continue; // answered elsewhere, or timed out, while earlier asks were on screen
      // An agent wrote much of it: shown to a person, nothing in it may reorder the text or drive the terminal.
      process.stdout.write(`${tty ? reveal(askBlock(ask, asRoot), { controls: true }) : askLine(ask)}\n`);
      const decision = await readAnswer(ask, tty, () => next(() => lines.shift()));
      if (!decision) return EXIT.ok;
      const rule = decision === 'allow_always' ? alwaysRule(ask) : undefined;
      const reply = await call(
        client.bus,
        agentId,
        'permission.decide',
        { requestId: ask.requestId, decision, ...(rule ? { pattern: rule } : {}) },
        { timeoutMs: 30_000 },
      );
      const again = reply.ok && reply['alreadyDecided'] ? ' (already decided)' : '';
      process.stdout.write(
        reply.ok
          ? `${ask.requestId}: ${reply['outcome']} by ${reply['by']}${again}\n`
          : `${ask.requestId}: not answered: ${reply.error.message}\n`,
      );
    }
  } finally {
    for (const s of subs) s.unsubscribe();
    rl.close();
  }
}

/** Reads lines until one is a valid answer for `ask`; undefined when input ended. */
async function readAnswer(
  ask: PermissionRequestedData,
  tty: boolean,
  line: () => Promise<string | undefined>,
): Promise<Answer | undefined> {
  for (;;) {
    if (tty) process.stdout.write(`allow? [y]es / [n]o${alwaysRule(ask) ? ' / [a]lways' : ''} > `);
    const text = await line();
    if (text === undefined) return undefined;
    const answer = ANSWERS[text.trim().toLowerCase()];
    if (answer === 'allow_always' && !alwaysRule(ask)) {
      process.stdout.write(`${ask.requestId}: "always" is not offered for this request; answer y or n\n`);
    } else if (answer) return answer;
    else
      process.stdout.write(
        `${ask.requestId}: answer y (allow once), n (deny) or a (always), not ${JSON.stringify(text)}\n`,
      );
  }
}
