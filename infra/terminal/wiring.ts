/**
 * @module
 * The terminal domain: terminal.* handlers on a TerminalManager
 * whose facts (including those that come between commands: a command
 * finishing after its yield, input awaited, idle close) are appended under
 * the terminal owner's subjects, output chunks to the output stream; the
 * foreground program for the permission gate; the files a command created,
 * modified or deleted in the agent's workspace recorded in its action log.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { isInside } from '../../machines/common/confine.ts';
import { checkedReply, ErrorCode, RuntimeError } from '../../schemas/index.ts';
import type { AgentId, StoredFact } from '../../schemas/index.ts';
import { TerminalConfig, TerminalExec } from '../../schemas/terminal.ts';
import { terminalAggregateDef } from '../../machines/terminal/terminal.ts';
import { resourceAggregateDef } from '../../machines/terminal/arbiter.ts';
import type { TerminalForeground } from '../../machines/permission/permission-input.ts';
import { TerminalManager } from '../../actors/terminal/terminal-manager.ts';
import { foregroundPgid, groupIdentity, shellDirectory, ttyModes } from '../../actors/terminal/terminal-proc.ts';
import { which } from '../../actors/terminal/pty-spawn.ts';
import { WorkspaceSnapshotter } from '../../actors/review/workspace-snapshot.ts';
import { WorkspaceTracker } from '../../actors/review/workspace-tracker.ts';
import { settledWithin } from '../../actors/review/action-log-files.ts';
import type { AgentDirectory } from '../../actors/agent/agent-directory.ts';
import { domainConfig, type LoadedConfig } from '../kernel/config.ts';
import { dataIf, defineDomain } from '../kernel/domain.ts';
import type { Host } from '../kernel/host.ts';
import type { ReviewRecorder } from '../review/wiring.ts';
import { reconcileTerminals } from './lost.ts';
import { retriedOpen } from './retried.ts';
import { type ShellEntry, shellRecords } from './shell-records.ts';

export type TerminalWiring = ReturnType<typeof wireTerminal>;

/** How long a stop waits for the records of the commands it ended (a log that refuses them queues them). */
const STOP_RECORD_MS = 5_000;

export function wireTerminal(deps: {
  host: Host;
  directory: AgentDirectory;
  review: ReviewRecorder;
  config: LoadedConfig;
  logger: Logger;
  /** Record shell side effects in the action log (change notifications, or snapshots around each exec). */
  trackShell: boolean;
  /** `domains.review.maxShellContentBytes`: new file content shell tracking stores, per run. */
  maxShellContentBytes?: number;
  /** A command line is being typed on a terminal (`TerminalManagerOptions.onCommandLine`). */
  onCommandLine?: (terminalId: string) => void;
}) {
  const configured = domainConfig(deps.config, 'terminal', TerminalConfig);
  // The sandbox is on wherever bubblewrap is installed unless the operator's config says otherwise, and the
  // runtime's own data dir (socket, event log) is never visible from inside it.
  const config = {
    ...configured,
    sandbox: configured.sandbox ?? which(configured.bwrapPath) !== undefined,
    sandboxHide: [...configured.sandboxHide, deps.config.dataDir],
  };
  const root = deps.config.rootAgentId;
  const manager = new TerminalManager({
    config,
    log: deps.logger,
    emit: async (fact) =>
      void (await deps.host.emit(
        { type: fact.type, data: fact.data },
        { agentId: (fact.agentId ?? root) as AgentId, causationId: fact.causationId },
      )),
    emitOutput: async (fact) =>
      void (await deps.host.emit(
        { type: fact.type, data: fact.data },
        { agentId: (fact.agentId ?? root) as AgentId, textJsonSafe: fact.jsonSafe },
      )),
    finished: (agentId) => deps.directory.finishedStatus(agentId),
    lineage: (agentId) => [...deps.directory.localAncestors(agentId).reverse(), agentId],
    rootAgentId: root,
    scratchDir: join(deps.config.dataDir, 'sandbox'),
    ...(deps.onCommandLine ? { onCommandLine: deps.onCommandLine } : {}),
  });
  const snapshotter = new WorkspaceSnapshotter({ blobs: deps.review.service.blobs });
  const tracker = new WorkspaceTracker({
    snapshotter,
    log: deps.logger,
    ...(deps.maxShellContentBytes === undefined ? {} : { maxContentBytes: deps.maxShellContentBytes }),
  });
  /** Commands still running after their exec replied, by `<terminalId> <commandId>` (ids count per terminal). */
  const pendingShell = new Map<string, ShellEntry>();
  const shell = shellRecords({ host: deps.host, directory: deps.directory, review: deps.review, tracker });
  // Every flush under a writer's locks (an edit's, a review's) first records what commands changed there.
  deps.review.unrecorded.collectWith(
    (paths, running) => shell.collect(paths, running),
    (path, content, review) => tracker.wrote(path, content, review),
  );

  const workspaceOf = (agentId: string) => deps.directory.view(agentId)?.workspace;
  /** Each exec's workspace refresh, started beside its permission decision (`ahead`), by command. */
  const refreshed = new WeakMap<object, Promise<boolean>>();
  const isRoot = (agentId: string) => agentId === root;

  /** Records of commands that ended after their exec replied, under way: a stop waits for them. */
  const recording = new Set<Promise<void>>();
  const recordLate = (entry: ShellEntry, ids: { terminalId?: string; commandId?: string }) => {
    const done: Promise<void> = shell
      .record(entry)
      .catch((err) => deps.logger.warn({ err, ...ids }, 'recording shell side effects failed'))
      .finally(() => recording.delete(done));
    recording.add(done);
  };
  /** A command that finished after its exec replied: its shell side effects are recorded now. */
  const onCommandEnd = (fact: StoredFact) => {
    const { terminalId, commandId } = fact.data as { terminalId?: string; commandId?: string };
    const key = `${terminalId} ${commandId}`;
    const entry = pendingShell.get(key);
    if (!entry) return;
    pendingShell.delete(key);
    recordLate(entry, { terminalId, commandId });
  };

  const domain = defineDomain({
    name: 'terminal',
    aggregates: [terminalAggregateDef, resourceAggregateDef],
    commands: {
      'terminal.open': async (ctx) => {
        const workspace = workspaceOf(ctx.command.agentId) ?? deps.config.workspace;
        confineOpen(ctx.command.data, workspace);
        const sandbox = sandboxFloor(config, ctx.command.agentId, ctx.command.data.sandbox);
        // The first scan of a workspace runs while the terminal starts, not in its first exec.
        const tracked = workspaceOf(ctx.command.agentId);
        if (deps.trackShell && tracked) {
          tracker.prepare(tracked).catch((err) => deps.logger.warn({ err, tracked }, 'shell tracking not started'));
        }
        return manager.open(
          ctx.command.agentId,
          { ...ctx.command.data, sandbox },
          { workspace, commandId: ctx.command.id },
        );
      },
      'terminal.exec': async (ctx) => {
        const agentId = ctx.command.agentId;
        const workspace = workspaceOf(agentId);
        const since = Date.now();
        const before =
          deps.trackShell && workspace
            ? await tracker.begin(workspace, refreshed.get(ctx.command), agentId)
            : undefined;
        const entry: ShellEntry | undefined =
          before && workspace
            ? {
                agentId,
                command: ctx.command.data.command,
                terminalId: ctx.command.data.terminalId,
                workspace,
                before,
                since,
              }
            : undefined;
        if (entry) shell.opened(entry);
        // The workspace is brought up to date from the end mark on (the changes the command made are queued
        // by then), side by side with the append of its finish rather than after it.
        const ended = entry ? () => shell.ended(entry) : undefined;
        const run = { onEnded: ended, expectDir: ctx.shownDirectory };
        const reply = await manager.execChecked(agentId, ctx.command.data, run).catch((err: unknown) => {
          if (entry) shell.discard(entry);
          throw err;
        });
        if (entry) {
          if (reply.status === 'exited' || reply.status === 'timeout') {
            // The command ran: its error keeps what the reply would have said of it.
            await shell.record(entry).catch((err: unknown) => {
              if (!(err instanceof RuntimeError) || err.details?.['ran'] !== true) throw err;
              const { status, exitCode, commandId } = reply;
              throw new RuntimeError(err.code, err.message, {
                details: { ...err.details, status, exitCode, commandId, terminalId: reply.terminalId },
              });
            });
          } else pendingShell.set(`${reply.terminalId} ${reply.commandId}`, entry);
        }
        // Built by typed code (execReply) from the session's state: sent without another parse.
        return checkedReply(TerminalExec, reply);
      },
      'terminal.wait': async (ctx) => manager.wait(ctx.command.agentId, ctx.command.data),
      'terminal.read': async (ctx) => manager.read(ctx.command.agentId, ctx.command.data),
      'terminal.write': async (ctx) => manager.write(ctx.command.agentId, ctx.command.data),
      'terminal.resize': async (ctx) => manager.resize(ctx.command.agentId, ctx.command.data),
      'terminal.signal': async (ctx) => manager.signal(ctx.command.agentId, ctx.command.data),
      'terminal.pause-all': async (ctx) => manager.pauseAll(ctx.command.agentId, { all: isRoot(ctx.command.agentId) }),
      'terminal.resume-all': async (ctx) =>
        manager.resumeAll(ctx.command.agentId, { all: isRoot(ctx.command.agentId) }),
      'terminal.close': async (ctx) => manager.close(ctx.command.agentId, ctx.command.data),
      'terminal.list': async (ctx) => manager.list(ctx.command.agentId, { all: isRoot(ctx.command.agentId) }),
    },
    // A terminal.open sent again after its reply was lost: answered from its terminal.opened, never a second PTY.
    retried: (command, facts) =>
      retriedOpen(command, facts, (id) => {
        const status = manager.get(id)?.status;
        return status !== undefined && status !== 'closing' && status !== 'closed';
      }),
    // An exec's workspace is brought up to date (the tracker's barrier and apply) while the gate decides.
    // A write sets its terminal's typeahead mark before the gate looks at what the terminal runs, as the
    // shell's drain did by waiting: a command ending while the write is judged leaves its bytes to the drain.
    ahead: (ctx) => {
      const workspace = dataIf(ctx, 'terminal.exec') && deps.trackShell ? workspaceOf(ctx.command.agentId) : undefined;
      if (workspace) refreshed.set(ctx.command, tracker.refreshAhead(workspace));
      const write = dataIf(ctx, 'terminal.write');
      const session = write ? manager.get(write.terminalId) : undefined;
      if (session?.agentId === ctx.command.agentId && session.status !== 'closed') session.rc.markTypeahead();
    },
    reactions: [{ on: ['terminal.command.finished', 'terminal.command.interrupted'], when: 'live', run: onCommandEnd }],
    // Terminals the log leaves open died with the previous host: closed with terminal.lost.
    restore: async () => void (await reconcileTerminals({ host: deps.host, logger: deps.logger })),
    // The terminals first: the commands they were running end, and what those changed is recorded while the log
    // still takes it (a command still running at a stop lost its change, and after the watchers stopped every
    // file it had touched read as deleted). A command left with no end fact is recorded as it is. Then the
    // watchers stop; an end later than that scans its workspace.
    stop: async () => {
      await manager.shutdown();
      for (const [key, entry] of pendingShell) {
        pendingShell.delete(key);
        recordLate(entry, { terminalId: entry.terminalId });
      }
      await settledWithin([...recording], STOP_RECORD_MS);
      tracker.close();
    },
  });

  return {
    manager,
    domain,
    /** Whether the terminal reads lines (canonical mode) rather than keys (an editor, a pager). */
    canonical(terminalId: string): boolean {
      const session = manager.get(terminalId);
      return session ? (ttyModes(session.tty)?.canonical ?? true) : true;
    },
    /** What a terminal is running: its shell at the prompt, or a program. */
    foreground(terminalId: string): TerminalForeground | undefined {
      const session = manager.get(terminalId);
      if (!session) return undefined;
      const pgid = foregroundPgid(session.pty.pid);
      // In the sandbox the PTY's process is bwrap and the shell runs under it: its group is the prompt too.
      // Otherwise a sandboxed prompt would be read as "bash running", and lines typed over several writes
      // would be judged one write at a time.
      if (pgid <= 0 || pgid === session.pty.pid || pgid === session.shellPid) return { kind: 'prompt' };
      try {
        return { kind: 'program', name: readFileSync(`/proc/${pgid}/comm`, 'utf8').trim() };
      } catch {
        return { kind: 'prompt' };
      }
    },
    /** The working directory of a terminal's shell (the host's path, also for a sandboxed one). */
    cwd(terminalId: string): string | undefined {
      const session = manager.get(terminalId);
      return session ? shellDirectory(session.shellPid) : undefined;
    },
    /**
     * Which processes read a terminal: its foreground group's members (`groupIdentity`), or undefined at the
     * shell prompt. Read only when a person is asked about a write, and again after the answer.
     */
    foregroundId(terminalId: string): string | undefined {
      const session = manager.get(terminalId);
      const pgid = session ? foregroundPgid(session.pty.pid) : 0;
      if (!session || pgid <= 0 || pgid === session.pty.pid || pgid === session.shellPid) return undefined;
      return groupIdentity(pgid);
    },
  };
}

/**
 * A terminal starts inside its agent's workspace (after resolving symlinks) with a system shell: a
 * sub-agent must not work in a sibling's directory, and a shell binary the agent wrote is not bash.
 */
function confineOpen(data: { cwd?: unknown; shell?: unknown }, workspace: string): void {
  if (typeof data.cwd === 'string') {
    const path = isAbsolute(data.cwd) ? data.cwd : resolve(workspace, data.cwd);
    if (existsSync(path)) {
      if (!isInside(realpathSync(workspace), realpathSync(path))) {
        throw new RuntimeError(
          ErrorCode.PermissionDenied,
          `cwd '${data.cwd}' is outside the agent's workspace ${workspace}; open terminals inside it`,
        );
      }
    }
  }
  if (
    typeof data.shell === 'string' &&
    data.shell.includes('/') &&
    !/^\/(usr\/)?(local\/)?s?bin\/[^/]+$/.test(data.shell)
  ) {
    throw new RuntimeError(
      ErrorCode.PermissionDenied,
      `shell '${data.shell}' is not a system shell; name it (bash) or give its path under /bin or /usr/bin`,
    );
  }
}

/**
 * Whether a terminal an agent opens is sandboxed: the operator's config is a floor the agent cannot lower.
 * `domains.terminal.sandbox` (default: on when bwrap is installed) applies to every agent except those in
 * `domains.terminal.sandboxOffFor`; only those may ask for `sandbox: false`. Anyone may ask for `true`.
 */
export function sandboxFloor(
  config: { sandbox: boolean; sandboxOffFor: string[] },
  agentId: string,
  asked: unknown,
): boolean {
  const floor = config.sandbox && !config.sandboxOffFor.includes(agentId);
  if (asked === false && floor) {
    throw new RuntimeError(
      ErrorCode.PermissionDenied,
      `terminal.open: agent '${agentId}' may not turn the sandbox off (data.sandbox: false); the operator's ` +
        `config decides that: domains.terminal.sandbox, or domains.terminal.sandboxOffFor for one agent. ` +
        `Omit "sandbox" to open a sandboxed terminal.`,
    );
  }
  return asked === true || floor;
}
