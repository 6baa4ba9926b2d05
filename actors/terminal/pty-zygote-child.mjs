// The small helper process that starts shells for the runtime (pty-zygote.ts). Forking costs time in
// proportion to the forking process's memory, and node-pty forks on the event loop: a runtime of a few
// hundred MB held its loop ~10-35 ms per terminal.open, one after another when a fleet opened 32 at once.
// This process stays small, so its forks are cheap, and they run on its own loop. The runtime opens the
// PTY itself and keeps the master; here the slave is opened by name and the shell started on it in a new
// session with the slave as its controlling terminal (`setsid --ctty`), after the line settings node-pty
// gives its own PTYs are applied (`stty`). Plain JavaScript: it runs without a TypeScript loader.
//
// Messages from the runtime: { type: 'spawn', id, tty, file, args, env, cwd, setsid, stty, sh }.
// Messages to it: { type: 'spawned', id, pid }, { type: 'failed', id, error }, { type: 'exit', pid, exitCode, signal }.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { constants } from 'node:os';

// The runtime is gone (its channel closed): so is every PTY master, so go too. Until then signals meant
// for the runtime's process group (Ctrl-C, a hangup) are the runtime's to act on: it closes its terminals
// and needs their shells' exits reported, so this process outlives them.
process.on('disconnect', () => process.exit(0));
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => undefined);

process.on('message', (m) => {
  if (m?.type !== 'spawn') return;
  // The line settings first. With a POSIX sh, the shell's own process applies them (`stty` on the slave it has
  // as stdin, then `exec` of the shell, same pid): one start on this loop per shell. Spawning stty from here
  // first put every stty fork of a burst ahead of the first shell (a fleet's 32 opens: the first shell
  // started after ~110-230 ms, the last after ~330-450 ms on a loaded box). Not fatal either way: a shell on
  // the kernel's default line settings still works.
  if (!m.stty) start(m, [m.file, ...m.args]);
  else if (m.sh)
    start(m, [m.sh, '-c', `"$0" ${LINE_SETTINGS.join(' ')} 2>/dev/null; exec "$@"`, m.stty, m.file, ...m.args]);
  else {
    const stty = spawn(m.stty, ['-F', m.tty, ...LINE_SETTINGS], { stdio: 'ignore' });
    stty.once('error', () => start(m, [m.file, ...m.args]));
    stty.once('exit', () => start(m, [m.file, ...m.args]));
  }
});

/** node-pty's termios for its own PTYs (its pty.cc), as stty words: what the kernel's defaults lack. */
const LINE_SETTINGS = ['iutf8', 'ixany', 'imaxbel', 'brkint', 'hupcl', 'eol', '255', 'eol2', '255'];

/** Starts `command` (the shell, or sh applying the line settings before it becomes the shell) on the slave. */
function start(m, command) {
  let fd;
  try {
    fd = openSync(m.tty, 'r+');
    const child = spawn(m.setsid, ['--ctty', ...command], { stdio: [fd, fd, fd], cwd: m.cwd, env: m.env });
    child.once('error', (err) => {
      process.send?.({ type: 'failed', id: m.id, error: `${m.setsid}: ${err.message}` });
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

process.send?.({ type: 'ready' });
