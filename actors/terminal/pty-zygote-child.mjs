// The small helper process that starts shells for the runtime (pty-zygote.ts). Forking costs time in
// proportion to the forking process's memory, and node-pty forks on the event loop: a runtime of a few
// hundred MB held its loop ~10-35 ms per terminal.open, one after another when a fleet opened 32 at once.
// This process stays small, so its forks are cheap, and they run on its own loop. The runtime opens the
// PTY itself and keeps the master; here the shell is started on the slave in a new session with the slave as
// its controlling terminal, after the line settings node-pty gives its own PTYs are applied (`stty`).
// Plain JavaScript: it runs without a TypeScript loader.
//
// Messages from the runtime: { type: 'spawn', id, tty, file, args, env, cwd, argv?, setsid, stty, settings }
// (`settings`: the line settings as stty words, session-command.ts's LINE_SETTINGS).
// { type: 'dirs', id, ops }: a terminal's cgroup steps (cgroup-bounds.ts's DirOp), in order, before the spawns
// sent after them (a cgroup's mkdir takes ~0.4 ms in the kernel: here, not on the runtime's loop).
// Messages to it: { type: 'spawned', id, pid }, { type: 'failed', id, error }, { type: 'exit', pid, exitCode, signal },
// { type: 'made', id }, { type: 'unmade', id, error }.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { constants } from 'node:os';
import { makeDirsSync } from './cgroup-dirs.mjs';

// The runtime is gone (its channel closed): so is every PTY master, so go too. Until then signals meant
// for the runtime's process group (Ctrl-C, a hangup) are the runtime's to act on: it closes its terminals
// and needs their shells' exits reported, so this process outlives them.
process.on('disconnect', () => process.exit(0));
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => undefined);

process.on('message', (m) => {
  if (m?.type === 'dirs') return makeDirs(m);
  if (m?.type !== 'spawn') return;
  // With a POSIX sh the runtime sends the whole command (session-command.ts): started in a new session, it opens
  // the slave as its controlling terminal and applies the line settings itself, in the shell's own process.
  if (m.argv) return start(m, m.argv, true);
  // Without one: setsid makes the session and the slave its controlling terminal (`--ctty`), after stty applied
  // the line settings from here (spawning stty ahead of each shell put every stty fork of a burst ahead of the
  // first shell: a fleet's 32 opens waited ~110-450 ms). Not fatal either way: a shell on the kernel's default
  // line settings still works.
  if (!m.stty) start(m, [m.setsid, '--ctty', m.file, ...m.args], false);
  else {
    const stty = spawn(m.stty, ['-F', m.tty, ...m.settings], { stdio: 'ignore' });
    const next = () => start(m, [m.setsid, '--ctty', m.file, ...m.args], false);
    stty.once('error', next);
    stty.once('exit', next);
  }
});

/** Starts `command` with the slave on descriptors 0-2; `session`: in a new session (setsid() in the child). */
function start(m, command, session) {
  let fd;
  try {
    fd = openSync(m.tty, 'r+');
    const [file, ...args] = command;
    const child = spawn(file, args, { stdio: [fd, fd, fd], cwd: m.cwd, env: m.env, detached: session });
    child.once('error', (err) => {
      process.send?.({ type: 'failed', id: m.id, error: `${file}: ${err.message}` });
    });
    child.once('spawn', () => process.send?.({ type: 'spawned', id: m.id, pid: child.pid }));
    child.once('exit', (code, signal) => {
      process.send?.({
        type: 'exit',
        pid: child.pid,
        exitCode: code ?? 0,
        signal: signal ? (constants.signals[signal] ?? 0) : 0,
      });
    });
  } catch (err) {
    process.send?.({ type: 'failed', id: m.id, error: err instanceof Error ? err.message : String(err) });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * A terminal's cgroup steps (cgroup-dirs.mjs). Synchronous: each batch ends before the next message (an agent's
 * cgroup is made before a later batch's leaf in it); made off this loop (fs.promises), the fleet bench's commands
 * were no faster.
 */
function makeDirs(m) {
  try {
    makeDirsSync(m.ops);
    process.send?.({ type: 'made', id: m.id });
  } catch (err) {
    process.send?.({ type: 'unmade', id: m.id, error: err instanceof Error ? err.message : String(err) });
  }
}

process.send?.({ type: 'ready' });
