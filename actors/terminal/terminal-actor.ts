/**
 * @module
 * The live terminal actor: the terminal machine (machines/terminal) provided
 * with its effects. The PTY is its invoked callback actor (terminal-pty.ts);
 * its deadlines (command timeout, SIGKILL grace, idle close) call back into
 * the session; its timers never keep the process alive on their own (the PTY
 * does, while the terminal lives).
 */
import { type Actor, createActor } from 'xstate';
import { NEVER_MS, terminalMachine } from '../../machines/terminal/terminal.ts';
import type { TerminalConfig } from '../../schemas/terminal.ts';
import type { IPty } from '@lydell/node-pty';
import { type PtyExit, type PtyOptions, ptyLogic } from './terminal-pty.ts';

export type TerminalActor = Actor<typeof terminalMachine>;

/** What the machine's deadlines do, and what they ask of the session. */
export type TerminalActorHooks = {
  /** The running command reached its timeout. */
  onDeadline: () => void;
  /** A grace period after the timeout's SIGINT, the command still running. */
  onGraceOver: () => void;
  /** Idle long enough: close the terminal. */
  closeIdle: () => void;
  /** Milliseconds since the last output or input. */
  idleFor: () => number;
  /** Whether the terminal may close for idleness now (at the prompt, nothing queued). */
  idleClosable: () => boolean;
};

const UNREF_CLOCK = {
  setTimeout: (fn: () => void, ms: number): NodeJS.Timeout => {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return timer;
  },
  clearTimeout: (id: NodeJS.Timeout): void => clearTimeout(id),
};

/** Creates and starts the actor; the PTY is spawned (and handed over through `pty.attach`) before this returns. */
export function startTerminalActor(config: TerminalConfig, hooks: TerminalActorHooks, pty: PtyOptions): TerminalActor {
  const idle = config.idleTimeoutMs;
  const actor = createActor(
    terminalMachine.provide({
      actors: { pty: ptyLogic(pty) },
      actions: { interrupt: hooks.onDeadline, escalate: hooks.onGraceOver, closeIdle: hooks.closeIdle },
      guards: { idleExpired: () => idle > 0 && hooks.idleFor() >= idle && hooks.idleClosable() },
      delays: {
        interruptGrace: config.interruptGraceMs,
        // Re-checked until the terminal has been idle long enough (output and input count as activity).
        idleCheck: () => (idle > 0 ? Math.max(100, idle - hooks.idleFor() + 1) : NEVER_MS),
      },
    }),
    { clock: UNREF_CLOCK },
  );
  actor.start();
  return actor;
}

/** A started terminal: its actor, the PTY its shell runs on, and that shell's exit. */
export type StartedTerminal = { actor: TerminalActor; pty: IPty; exited: Promise<PtyExit> };

/**
 * Starts the actor and its PTY (`startTerminalActor`) and returns them with the shell's exit; when the PTY could
 * not be spawned, stops the actor and throws why.
 */
export function startTerminal(
  config: TerminalConfig,
  hooks: TerminalActorHooks,
  pty: Pick<PtyOptions, 'spec' | 'rc' | 'spawned' | 'onData'>,
): StartedTerminal {
  let exitSeen = false;
  let resolveExit: (e: PtyExit) => void = () => undefined;
  const exited = new Promise<PtyExit>((resolve) => (resolveExit = resolve));
  let attached: { pty: IPty } | { error: unknown } | undefined;
  const actor = startTerminalActor(config, hooks, {
    ...pty,
    attach: (result) => (attached = result),
    onExit: (e) => {
      exitSeen = true;
      resolveExit(e);
    },
    exited: () => exitSeen,
  });
  // Set synchronously by the PTY actor while the machine started (TypeScript cannot see the callback).
  const spawned = attached as { pty: IPty } | { error: unknown } | undefined;
  if (!spawned || 'error' in spawned) {
    actor.stop();
    throw spawned ? spawned.error : new Error(`The PTY of terminal '${pty.spec.terminalId}' was not spawned.`);
  }
  return { actor, pty: spawned.pty, exited };
}
