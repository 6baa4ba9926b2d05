/**
 * @module
 * The replies for exec, wait and read: a job's status and output as plain
 * text with head+tail truncation and paging hints (waiting on a job is in
 * `terminal-job.ts`).
 */
import { limitHint } from '../../machines/terminal/limit-hints.ts';
import { headTail, plainText } from '../../machines/terminal/terminal-text.ts';
import { ErrorCode, LimitExceededError, RuntimeError } from '../../schemas/errors.ts';
import type { TerminalId } from '../../schemas/ids.ts';
import type { ExecReply, ScreenSnapshot } from '../../schemas/terminal.ts';
import type { Job } from './terminal-job.ts';
import type { TerminalOutput } from './terminal-output.ts';

export { type Job, newJob, settle, wake } from './terminal-job.ts';

/** What the replies read of a session: its id, cwd, read position and output. */
export type ExecView = {
  readonly terminalId: string;
  readonly cwd: string;
  readCursor: number;
  readonly output: Pick<TerminalOutput, 'end' | 'retainedStart' | 'slice' | 'snapshot'>;
};

/**
 * Throws `limit_exceeded` when a terminal already holds `limit` commands queued behind the running one
 * (`domains.terminal.maxQueuedPerTerminal`). A queued exec with `yieldMs: 0` replies at once, so without it
 * one agent queues without end behind a long command. Call it in the same turn as the submit that queues.
 */
export function assertQueueRoom(session: { terminalId: string; queue: readonly unknown[] }, limit: number): void {
  if (session.queue.length < limit) return;
  throw new LimitExceededError(
    `Terminal '${session.terminalId}' already has ${session.queue.length} commands queued behind the running one, ` +
      `the limit domains.terminal.maxQueuedPerTerminal = ${limit}; wait for them (terminal.wait) or run this ` +
      'in another terminal.',
  );
}

/** A command's `timeoutMs`, refused past `domains.terminal.maxTimeoutMs` (`max`). */
export function checkedTimeout(ms: number | undefined, max: number): number | undefined {
  if (ms !== undefined && ms > max) {
    throw new LimitExceededError(
      `timeoutMs '${ms}' is beyond the maximum of ${max} ms; pass a smaller value (use yieldMs and terminal.wait ` +
        'for long commands).',
    );
  }
  return ms;
}

export function execReply(session: ExecView, job: Job, maxBytes: number): ExecReply {
  if (job.state === 'cancelled' && job.denied) {
    throw new RuntimeError(
      ErrorCode.PermissionDenied,
      `Command '${job.commandId}' on terminal '${session.terminalId}' did not run: ${job.cancelReason}. Look at ` +
        'the terminal again and send the command anew if it is still wanted there.',
    );
  }
  if (job.state === 'cancelled') {
    const hits = job.limitsHit ?? [];
    throw new RuntimeError(
      ErrorCode.InvalidState,
      `Command '${job.commandId}' on terminal '${session.terminalId}' did not finish: ` +
        `${job.cancelReason ?? 'cancelled'}; open a new terminal and run it again.` +
        `${hits.length ? ` ${limitHint(hits)}` : ''}`,
      hits.length ? { details: { limitsHit: hits.map((h) => h.key) } } : {},
    );
  }
  const finished = job.state === 'finished';
  const end = finished ? job.outputEnd! : session.output.end;
  const started = job.state === 'running' || finished;
  const lost = started && job.outputStart < session.output.retainedStart;
  const text = started
    ? outputText(session, job.outputStart, end, maxBytes)
    : { text: '', truncated: false, omittedBytes: 0 };
  const status: ExecReply['status'] = finished
    ? job.timedOut
      ? 'timeout'
      : 'exited'
    : job.inputAwaited
      ? 'input_required'
      : started
        ? 'running'
        : 'queued';
  const reply: ExecReply = {
    terminalId: session.terminalId as TerminalId,
    commandId: job.commandId,
    status,
    exitCode: finished ? job.exitCode! : null,
    signal: finished ? job.signal : null,
    durationMs: finished ? job.durationMs! : started ? Date.now() - job.startedAt : null,
    output: text.text,
    truncated: text.truncated || lost,
    omittedBytes: text.omittedBytes,
    cursor: end,
    cwd: finished ? session.cwd : null,
  };
  if (job.resourceWaitMs !== undefined) reply.resourceWaitMs = job.resourceWaitMs;
  if (status === 'input_required') {
    reply.prompt = job.inputAwaited!;
    reply.hint =
      `The command waits for input: send it with terminal.write (end with "\\n"; ` +
      `add "secret": true for passwords), or interrupt with terminal.signal SIGINT.`;
  } else if (status === 'running' || status === 'queued') {
    reply.hint =
      `Still ${status}: call terminal.wait {"terminalId": "${session.terminalId}", ` +
      `"commandId": "${job.commandId}"} or terminal.read {"cursor": ${end}}.`;
  } else if (status === 'timeout') {
    const exit = `exit ${job.exitCode}`;
    reply.hint = `The command reached its timeout and was interrupted (${exit}); the terminal is usable again.`;
  }
  if (finished && job.limitsHit?.length) {
    reply.limitsHit = job.limitsHit.map((h) => h.key);
    reply.hint = `${reply.hint ? `${reply.hint} ` : ''}${limitHint(job.limitsHit)}`;
  }
  if (lost)
    reply.hint =
      `${reply.hint ? `${reply.hint} ` : ''}The start of the ` +
      `output is no longer kept in memory; read it from the log.`;
  return reply;
}

/**
 * Plain text of the output between two offsets, head+tail truncated. For big
 * outputs only the two ends are rendered (a 50 MB flood costs two small slices).
 */
function outputText(session: ExecView, from: number, to: number, maxBytes: number) {
  const hint = `page it with terminal.read {"cursor": ${from}}`;
  const start = Math.max(from, session.output.retainedStart);
  const window = 4 * maxBytes;
  if (to - start <= 2 * window) return headTail(plainText(session.output.slice(start, to)), maxBytes, hint);
  const head = plainText(session.output.slice(start, start + window));
  const tail = plainText(session.output.slice(to - window, to));
  const cut = headTail(`${head}${tail}`, maxBytes, hint);
  // What was left out of the middle, in output bytes (approximate: raw, not plain).
  const omitted = to - start - 2 * window + cut.omittedBytes;
  return {
    text: cut.text.replace(/\[… \d+ bytes omitted/, `[… about ${omitted} bytes omitted`),
    truncated: true,
    omittedBytes: omitted,
  };
}

export type ReadReply = {
  terminalId: string;
  output: string;
  cursor: number;
  nextCursor: number;
  truncated: boolean;
  omittedBytes: number;
  hint?: string;
  screen?: ScreenSnapshot;
};

/**
 * Reads output. With a cursor: the page of at most `maxBytes` raw bytes from
 * there (ends at nextCursor; read on to page). Without one: everything since
 * the previous read, head+tail truncated.
 */
export async function readOutput(
  session: ExecView,
  cursor: number | undefined,
  maxBytes: number,
  screen: boolean,
): Promise<ReadReply> {
  const end = session.output.end;
  if (cursor !== undefined && cursor > end) {
    throw new RuntimeError(
      ErrorCode.InvalidMessage,
      `cursor '${cursor}' is past the end of terminal '${session.terminalId}' ` +
        `output (${end} bytes); pass a cursor from a previous reply.`,
    );
  }
  const from = Math.max(cursor ?? session.readCursor, session.output.retainedStart);
  let reply: ReadReply;
  if (cursor !== undefined) {
    const to = Math.min(end, from + maxBytes);
    const text = plainText(session.output.slice(from, to));
    reply = {
      terminalId: session.terminalId,
      output: text,
      cursor: from,
      nextCursor: to,
      truncated: to < end,
      omittedBytes: 0,
    };
    if (to < end) reply.hint = `${end - to} more bytes: read on with {"cursor": ${to}}.`;
  } else {
    const text = headTail(
      plainText(session.output.slice(from, end)),
      maxBytes,
      `page it with terminal.read {"cursor": ${from}}`,
    );
    reply = {
      terminalId: session.terminalId,
      output: text.text,
      cursor: from,
      nextCursor: end,
      truncated: text.truncated,
      omittedBytes: text.omittedBytes,
    };
  }
  if (from > (cursor ?? session.readCursor)) {
    reply.hint =
      `${reply.hint ? `${reply.hint} ` : ''}Output before byte ` +
      `${from} is no longer kept in memory; read it from the log.`;
  }
  session.readCursor = reply.nextCursor;
  if (screen) reply.screen = await session.output.snapshot();
  return reply;
}
