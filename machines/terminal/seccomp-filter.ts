/**
 * @module
 * The seccomp filter a sandboxed terminal runs under (bubblewrap `--seccomp`): a classic BPF program that
 * refuses, with EPERM, the two ioctls that push bytes into a terminal's input queue, TIOCSTI and TIOCLINUX
 * (its paste subcommand). Without it, a program the gate allowed can push a line into its own terminal, and the
 * shell reads that line at the next prompt as if typed and runs it unjudged (CVE-2017-5226 is the same hole in
 * bubblewrap itself; its fix, `--new-session`, would take the PTY away as the shell's controlling terminal).
 * Every other system call is allowed. Pure: it returns the program's bytes (`struct sock_filter[]`, little
 * endian), or undefined for an architecture it does not know.
 */

/** `ioctl` request numbers (include/uapi/asm-generic/ioctls.h; the same on x86 and arm). */
export const TIOCSTI = 0x5412;
export const TIOCLINUX = 0x541c;

/** audit architecture → the `ioctl` system call numbers under it (native, compat, x32). */
const IOCTL: Record<string, Array<{ arch: number; numbers: number[] }>> = {
  // x86_64, i386 (int 0x80 and compat), and the x32 ABI (nr | __X32_SYSCALL_BIT, reported as x86_64).
  x64: [
    { arch: 0xc000003e, numbers: [16, 0x40000000 + 514] },
    { arch: 0x40000003, numbers: [54] },
  ],
  // aarch64 and its 32-bit arm compat.
  arm64: [
    { arch: 0xc00000b7, numbers: [29] },
    { arch: 0x40000028, numbers: [54] },
  ],
};

const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const RET_K = 0x06;
export const SECCOMP_RET_ALLOW = 0x7fff0000;
export const SECCOMP_RET_ERRNO_EPERM = 0x00050000 | 1;
/** Offsets in `struct seccomp_data`: nr, arch, args[1]'s low 32 bits (the request; the kernel reads it as 32-bit). */
const NR = 0;
const ARCH = 4;
const ARG1_LOW = 24;

type Insn = { code: number; k: number; jt?: string; jf?: string; label?: string };

/** The filter for `nodeArch` (`process.arch`), or undefined when skein has no table for it. */
export function ttyInjectionFilter(nodeArch: string): Uint8Array | undefined {
  const arches = IOCTL[nodeArch];
  if (!arches) return undefined;
  const prog: Insn[] = [{ code: LD_W_ABS, k: ARCH }];
  arches.forEach(({ arch }, i) => prog.push({ code: JEQ_K, k: arch, jt: `arch${i}`, jf: 'next' }));
  prog.push({ code: RET_K, k: SECCOMP_RET_ALLOW });
  arches.forEach(({ numbers }, i) => {
    prog.push({ code: LD_W_ABS, k: NR, label: `arch${i}` });
    for (const nr of numbers) prog.push({ code: JEQ_K, k: nr, jt: 'request', jf: 'next' });
    prog.push({ code: RET_K, k: SECCOMP_RET_ALLOW });
  });
  prog.push({ code: LD_W_ABS, k: ARG1_LOW, label: 'request' });
  prog.push({ code: JEQ_K, k: TIOCSTI, jt: 'deny', jf: 'next' });
  prog.push({ code: JEQ_K, k: TIOCLINUX, jt: 'deny', jf: 'next' });
  prog.push({ code: RET_K, k: SECCOMP_RET_ALLOW });
  prog.push({ code: RET_K, k: SECCOMP_RET_ERRNO_EPERM, label: 'deny' });
  return assemble(prog);
}

/** Resolves labels to forward jump offsets (`next` is the following instruction) and packs the program. */
function assemble(prog: Insn[]): Uint8Array {
  const at = new Map(prog.flatMap((insn, i) => (insn.label ? [[insn.label, i] as const] : [])));
  const offset = (from: number, label: string | undefined) => {
    if (label === undefined || label === 'next') return 0;
    const to = at.get(label);
    if (to === undefined || to <= from || to - from - 1 > 255) throw new Error(`bad seccomp jump to ${label}`);
    return to - from - 1;
  };
  const bytes = new Uint8Array(prog.length * 8);
  const view = new DataView(bytes.buffer);
  prog.forEach((insn, i) => {
    view.setUint16(i * 8, insn.code, true);
    view.setUint8(i * 8 + 2, offset(i, insn.jt));
    view.setUint8(i * 8 + 3, offset(i, insn.jf));
    view.setUint32(i * 8 + 4, insn.k >>> 0, true);
  });
  return bytes;
}
