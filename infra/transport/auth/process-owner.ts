/**
 * @module
 * Whether the process that handed out a console credential is gone, so the next start may revoke what it left.
 * A pid alone misleads both ways: in a container the next `skein ui` often gets the dead one's pid (nothing was
 * revoked), and a start in another pid namespace sees a live console's pid as missing (a live page cut off). So
 * the owner is its pid namespace, boot, pid and start time; another namespace or boot cannot judge it (the
 * credential is left to its expiry), and a zombie has ended.
 */
import { readFileSync, readlinkSync } from 'node:fs';

function read(path: string, how: (p: string) => string): string | undefined {
  try {
    return how(path).trim();
  } catch {
    return undefined;
  }
}

/** State and start time (clock ticks since boot) from /proc/<pid>/stat: after the command's `)`. */
function stat(pid: number): { state: string; start: string } | undefined {
  const text = read(`/proc/${pid}/stat`, (p) => readFileSync(p, 'utf8'));
  const fields = text?.slice(text.lastIndexOf(')') + 2).split(' ');
  return fields && fields.length > 19 ? { state: fields[0]!, start: fields[19]! } : undefined;
}

function here(): { ns: string; boot: string } | undefined {
  const ns = read('/proc/self/ns/pid', readlinkSync);
  const boot = read('/proc/sys/kernel/random/boot_id', (p) => readFileSync(p, 'utf8'));
  return ns && boot ? { ns, boot } : undefined;
}

/** This process as an owner: `<pid namespace>|<boot id>|<pid>|<start time>`; undefined without /proc. */
export function processOwner(): string | undefined {
  const at = here();
  const own = stat(process.pid);
  return at && own ? `${at.ns}|${at.boot}|${process.pid}|${own.start}` : undefined;
}

/** Whether process `pid` runs (a process of another user counts: EPERM). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the owner recorded as `owner` (else by `pid` alone) has surely ended. */
export function ownerGone(pid: number, owner: string | undefined): boolean {
  if (owner === undefined) return !pidAlive(pid);
  const [ns, boot, , start] = owner.split('|');
  const at = here();
  // Another pid namespace or another boot: its pid means nothing here.
  if (!at || at.ns !== ns || at.boot !== boot) return false;
  const now = stat(pid);
  return now === undefined || now.state === 'Z' || now.start !== start;
}
