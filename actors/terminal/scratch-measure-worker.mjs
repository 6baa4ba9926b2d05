/**
 * @module
 * The scratch guard's measuring thread (scratch-guard.ts): what each sandboxed terminal holds on the scratch disk,
 * walked here so that a tree an agent made as big or as deep as it could never stalls the runtime's event loop.
 *
 * Asked `{ id, dev, terminals: [{ terminalId, dir, leader, procs?, io? }] }`, it answers
 * `{ id, uses: [{ terminalId, bytes, inodes, writing, written, hidden, complete }] }`:
 * - the scratch directory `dir`: disk blocks (st_blocks × 512) and inodes of every entry, not crossing into
 *   another filesystem; at most `ENTRY_BUDGET` entries or `WALK_MS` a terminal (then `complete: false`, what was
 *   counted is a floor);
 * - the deleted files on disk `dev` that a process of the terminal keeps open: `dd of=/tmp/x & rm /tmp/x` fills the
 *   disk with nothing in a directory to see; and (`writing`) the other files on that disk it has open for
 *   writing, a workspace file included, for the reserve to find who is filling the disk;
 * - with `io`, what its processes have written to disk in all (`written`: `write_bytes` less
 *   `cancelled_write_bytes` of each `/proc/<pid>/io`, which holds what a process's reaped children wrote too);
 *   the guard takes the growth between two checks. `hidden`: its processes whose writes cannot be counted.
 *
 * Its processes: those in its cgroup leaf (`procs`, that leaf's `cgroup.procs`: a sandbox's processes cannot move
 * out), else every process below its PTY's leader (a sandbox's all are: its pid namespace), from a walk of /proc
 * (~0.1 ms a process here, so only then).
 *
 * Plain JavaScript: it is started as a worker thread from the sources (tsx) and from the bundle alike.
 */
import {
  accessSync,
  chmodSync,
  closeSync,
  constants,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import { parentPort } from 'node:worker_threads';

/**
 * Entries and wall time a terminal's walk may take a check: a scratch bigger, or made slower to walk, is past any
 * sane bound (machines/terminal/scratch-guard.ts closes it first), and the other terminals are still measured.
 */
const ENTRY_BUDGET = 200_000;
const WALK_MS = 5_000;
/** Linux's O_PATH (node's constants do not have it): a descriptor naming a file without opening it. */
const O_PATH = 0o10000000;

/** pid → its children, from /proc (processes that end meanwhile are skipped). */
function childrenByPid() {
  const children = new Map();
  let names = [];
  try {
    names = readdirSync('/proc');
  } catch {
    return children;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue;
    }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(name));
    children.set(ppid, list);
  }
  return children;
}

function walk(dir, use) {
  let root;
  try {
    root = lstatSync(dir);
  } catch {
    return; // not made yet, or already removed
  }
  use.bytes += root.blocks * 512;
  use.inodes += 1;
  let inside;
  try {
    inside = realpathSync(dir);
  } catch {
    return;
  }
  const stack = [dir];
  let budget = ENTRY_BUDGET;
  const deadline = Date.now() + WALK_MS;
  while (stack.length > 0) {
    const current = stack.pop();
    const names = list(current, inside);
    if (!names) continue; // removed meanwhile (counted as an inode already)
    for (const name of names) {
      if (--budget < 0 || (budget % 1024 === 0 && Date.now() > deadline)) {
        use.complete = false;
        return;
      }
      const path = join(current, name);
      let st;
      try {
        st = lstatSync(path);
      } catch {
        continue;
      }
      if (st.dev !== root.dev) continue; // a mount: not this disk's
      use.bytes += st.blocks * 512;
      use.inodes += 1;
      if (st.isDirectory()) stack.push(path);
    }
  }
}

/**
 * A directory's names. One its owner closed (`chmod 000`, or `444`: names without the right to look at them; the
 * sandbox runs as the runtime's user, so the runtime owns it) is opened to the owner again first: a closed
 * directory must not hide what it holds. Only a directory inside the scratch (`inside`, its real path) is: the
 * agent may swap a directory on the path for a symlink at any time, so the one changed is the one opened here
 * (`O_PATH`, no symlink followed at the end), its real path checked, and its mode changed through that descriptor.
 */
function list(dir, inside) {
  try {
    accessSync(dir, constants.R_OK | constants.X_OK);
  } catch {
    openToOwner(dir, inside);
  }
  try {
    return readdirSync(dir);
  } catch {
    return undefined;
  }
}

export function openToOwner(dir, inside) {
  let fd;
  try {
    fd = openSync(dir, O_PATH | constants.O_NOFOLLOW | constants.O_DIRECTORY);
    const real = readlinkSync(`/proc/self/fd/${fd}`);
    if (real === inside || real.startsWith(`${inside}/`)) chmodSync(`/proc/self/fd/${fd}`, 0o700);
  } catch {
    // gone, swapped for a symlink, or not ours: what readdir can list is counted
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The terminal's processes: its cgroup leaf's, else the leader and every process below it. */
function processesOf(leader, procs, children) {
  if (procs) {
    try {
      return readFileSync(procs, 'latin1').split('\n').filter(Boolean).map(Number);
    } catch {} // the leaf is going: the walk instead
  }
  const pids = [leader];
  const below = children();
  for (let i = 0; i < pids.length; i++) for (const child of below.get(pids[i]) ?? []) pids.push(child);
  return pids;
}

/**
 * The files on disk `dev` the terminal's processes keep open: deleted ones count as theirs (`bytes`, `inodes`);
 * others open for writing (the workspace's, or the scratch's again) are `writing`, which only says who is filling
 * the disk when it runs short.
 */
function heldFiles(pids, dev, use) {
  const seen = new Set();
  for (const pid of pids) {
    let fds;
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // ended meanwhile
    }
    for (const fd of fds) {
      let st;
      try {
        st = statSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (!st.isFile() || st.dev !== dev || seen.has(st.ino)) continue;
      if (st.nlink === 0) {
        seen.add(st.ino);
        use.bytes += st.blocks * 512;
        use.inodes += 1;
      } else if (openForWriting(pid, fd)) {
        seen.add(st.ino);
        use.writing += st.blocks * 512;
      }
    }
  }
}

/** Whether a process's descriptor was opened for writing (O_WRONLY or O_RDWR, from its fdinfo). */
function openForWriting(pid, fd) {
  try {
    const flags = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'latin1'))?.[1];
    return flags !== undefined && (Number.parseInt(flags, 8) & 3) !== 0;
  } catch {
    return false;
  }
}

/** SIGCHLD's bit in a /proc status signal mask (signal 17 on Linux: bit 16). */
const SIGCHLD_BIT = 1n << 16n;

/**
 * Bytes the processes wrote to storage and did not cancel (truncated or deleted before writeback), and how many
 * of them hide what they or their children write: a process that ignores SIGCHLD (the kernel reaps its children,
 * and their counts go with them), or whose /proc files are closed to the runtime (made undumpable).
 */
function writtenBy(pids) {
  let total = 0;
  let hidden = 0;
  for (const pid of pids) {
    let io;
    try {
      io = readFileSync(`/proc/${pid}/io`, 'latin1');
    } catch (err) {
      if (err?.code === 'EACCES' || err?.code === 'EPERM') hidden++;
      continue; // or ended meanwhile
    }
    const write = /^write_bytes: (\d+)$/m.exec(io)?.[1];
    const cancelled = /^cancelled_write_bytes: (\d+)$/m.exec(io)?.[1];
    total += Math.max(0, Number(write ?? 0) - Number(cancelled ?? 0));
    if (ignoresChildren(pid)) hidden++;
  }
  return { total, hidden };
}

/** Whether a process ignores SIGCHLD (`SigIgn` of its status). */
function ignoresChildren(pid) {
  try {
    const mask = /^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1];
    return mask !== undefined && (BigInt(`0x${mask}`) & SIGCHLD_BIT) !== 0n;
  } catch {
    return false; // ended meanwhile
  }
}

parentPort?.on('message', ({ id, dev, terminals }) => {
  let walked;
  const children = () => {
    walked ??= childrenByPid();
    return walked;
  };
  const uses = terminals.map(({ terminalId, dir, leader, procs, io }) => {
    const use = { terminalId, bytes: 0, inodes: 0, writing: 0, written: 0, hidden: 0, complete: true };
    walk(dir, use);
    const pids = processesOf(leader, procs, children);
    heldFiles(pids, dev, use);
    if (io) ({ total: use.written, hidden: use.hidden } = writtenBy(pids));
    return use;
  });
  parentPort?.postMessage({ id, uses });
});
