import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO_EPERM,
  TIOCLINUX,
  TIOCSTI,
  ttyInjectionFilter,
} from '../../../machines/terminal/seccomp-filter.ts';
import { propertySeed } from '../../support/seed.ts';

const seed = propertySeed();

/** Runs a classic BPF seccomp program (the three opcodes it may use) over one `struct seccomp_data`. */
function run(program: Uint8Array, data: { nr: number; arch: number; args: bigint[] }): number {
  const view = new DataView(program.buffer, program.byteOffset, program.byteLength);
  const mem = new DataView(new ArrayBuffer(64));
  mem.setInt32(0, data.nr, true);
  mem.setUint32(4, data.arch, true);
  data.args.forEach((a, i) => mem.setBigUint64(16 + 8 * i, BigInt.asUintN(64, a), true));
  let acc = 0;
  for (let pc = 0; pc * 8 < program.length; pc++) {
    const code = view.getUint16(pc * 8, true);
    const jt = view.getUint8(pc * 8 + 2);
    const jf = view.getUint8(pc * 8 + 3);
    const k = view.getUint32(pc * 8 + 4, true);
    if (code === 0x20) acc = mem.getUint32(k, true);
    else if (code === 0x15) pc += acc === k ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`opcode ${code} at ${pc}`);
  }
  throw new Error('fell off the end of the program');
}

const X86_64 = 0xc000003e;
const I386 = 0x40000003;
const AARCH64 = 0xc00000b7;
const ARM = 0x40000028;
const IOCTL: Record<number, number[]> = {
  [X86_64]: [16, 0x40000000 + 514],
  [I386]: [54],
  [AARCH64]: [29],
  [ARM]: [54],
};

describe('ttyInjectionFilter', () => {
  const x64 = ttyInjectionFilter('x64')!;
  const arm64 = ttyInjectionFilter('arm64')!;

  it('refuses TIOCSTI and TIOCLINUX under every ABI of the machine, x32 included', () => {
    for (const [program, arches] of [
      [x64, [X86_64, I386]],
      [arm64, [AARCH64, ARM]],
    ] as const) {
      for (const arch of arches)
        for (const nr of IOCTL[arch]!)
          for (const request of [TIOCSTI, TIOCLINUX])
            expect(run(program, { nr, arch, args: [0n, BigInt(request)] })).toBe(SECCOMP_RET_ERRNO_EPERM);
    }
  });

  it('reads the request as the kernel does, by its low 32 bits: high bits set do not slip past', () => {
    expect(run(x64, { nr: 16, arch: X86_64, args: [0n, (1n << 32n) | BigInt(TIOCSTI)] })).toBe(SECCOMP_RET_ERRNO_EPERM);
    expect(run(x64, { nr: 16, arch: X86_64, args: [0n, 0xffffffff00000000n | BigInt(TIOCSTI)] })).toBe(
      SECCOMP_RET_ERRNO_EPERM,
    );
  });

  it('allows other ioctls (TCGETS, TIOCGWINSZ) and the same request number under another system call', () => {
    expect(run(x64, { nr: 16, arch: X86_64, args: [0n, 0x5401n] })).toBe(SECCOMP_RET_ALLOW);
    expect(run(x64, { nr: 16, arch: X86_64, args: [0n, 0x5413n] })).toBe(SECCOMP_RET_ALLOW);
    expect(run(x64, { nr: 0, arch: X86_64, args: [0n, BigInt(TIOCSTI)] })).toBe(SECCOMP_RET_ALLOW);
  });

  it(`denies exactly the injecting ioctls, for any system call, arch and arguments (seed ${seed})`, () => {
    const arches = [X86_64, I386, AARCH64, ARM, 0x12345678];
    fc.assert(
      fc.property(
        fc.constantFrom(x64, arm64),
        fc.constantFrom(...arches),
        fc.oneof(fc.constantFrom(16, 29, 54, 0x40000000 + 514), fc.integer({ min: 0, max: 0x7fffffff })),
        fc.oneof(
          fc.constantFrom(BigInt(TIOCSTI), BigInt(TIOCLINUX)),
          fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
          fc.bigInt({ min: 0n, max: (1n << 32n) - 1n }).map((hi) => (hi << 32n) | BigInt(TIOCSTI)),
        ),
        (program, arch, nr, request) => {
          const own = program === x64 ? [X86_64, I386] : [AARCH64, ARM];
          const low = Number(request & 0xffffffffn);
          const denied = own.includes(arch) && IOCTL[arch]!.includes(nr) && (low === TIOCSTI || low === TIOCLINUX);
          expect(run(program, { nr, arch, args: [0n, request, 0n] })).toBe(
            denied ? SECCOMP_RET_ERRNO_EPERM : SECCOMP_RET_ALLOW,
          );
        },
      ),
      { seed, numRuns: 2000 },
    );
  });

  it('has no filter for an architecture it has no table for (the sandbox then runs without it)', () => {
    expect(ttyInjectionFilter('riscv64')).toBeUndefined();
  });
});
