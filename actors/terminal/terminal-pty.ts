/**
 * @module
 * The PTY as the terminal machine's invoked callback actor: it spawns the
 * shell when the machine starts (or takes the one the shell helper started),
 * hands the PTY to the session (which writes to it, resizes and pauses it), forwards its output and exit, and when the
 * machine stops (the terminal closed, or a replay/shutdown stopped it) drops
 * its listeners and, if the shell has not exited yet, kills it: a PTY never
 * outlives its machine.
 */
import type { IPty } from '@lydell/node-pty';
import { fromCallback } from 'xstate';
import type { RcFiles } from './shell-integration.ts';
import { type SpawnSpec, spawnPty } from './pty-spawn.ts';

export type PtyExit = { exitCode: number; signal?: number };

export type PtyOptions = {
  spec: SpawnSpec;
  rc: RcFiles;
  /** The shell already started on a PTY (pty-zygote.ts); else it is spawned here, forking this process. */
  spawned?: IPty | undefined;
  /** Called synchronously while the machine starts: the PTY, or why it could not be spawned. */
  attach: (result: { pty: IPty } | { error: unknown }) => void;
  onData: (data: string) => void;
  onExit: (exit: PtyExit) => void;
  /** Whether the shell has exited (then stopping kills nothing: its pid may already be reused). */
  exited: () => boolean;
};

/** The callback logic to provide as the terminal machine's `pty` actor. */
export function ptyLogic(options: PtyOptions) {
  return fromCallback(() => {
    let pty: IPty;
    try {
      pty = options.spawned ?? spawnPty(options.spec, options.rc.path, options.rc.dir);
    } catch (error) {
      options.attach({ error });
      return;
    }
    options.attach({ pty });
    const data = pty.onData(options.onData);
    const exit = pty.onExit(options.onExit);
    return () => {
      data.dispose();
      exit.dispose();
      if (options.exited()) return;
      try {
        pty.kill('SIGKILL');
      } catch {
        // Already gone.
      }
    };
  });
}
