import { describe, expect, it } from 'vitest';
import {
  type DiskState,
  diskBoundOf,
  reserveShortOf,
  type ScratchUse,
  scratchVictims,
} from '../../../machines/terminal/scratch-guard.ts';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
/** A 100 GiB disk with 50 GiB and half its inodes free. */
const roomy: DiskState = { sizeBytes: 100 * GiB, freeBytes: 50 * GiB, inodes: 1_000_000, freeInodes: 500_000 };
const use = (terminalId: string, lineage: string[], mib: number, inodes = 10): ScratchUse => ({
  terminalId,
  lineage,
  bytes: mib * MiB,
  inodes,
});

describe('diskBoundOf', () => {
  it('takes bytes as they are and a share of the size, rounded down', () => {
    expect(diskBoundOf(12345, 100 * GiB)).toBe(12345);
    expect(diskBoundOf('10%', 1005)).toBe(100);
    expect(diskBoundOf(0, GiB)).toBe(0);
  });
});

describe('scratchVictims: per agent', () => {
  const limits = { maxPerAgent: 16 * MiB, reserve: 0 };

  it('closes nothing at or under the bound', () => {
    expect(scratchVictims(roomy, limits, [use('t1', ['a1'], 8), use('t2', ['a1'], 8)])).toEqual([]);
  });

  it("sums an agent's terminals and closes the biggest past the bound", () => {
    const victims = scratchVictims(roomy, limits, [use('t1', ['a1'], 9), use('t2', ['a1'], 10), use('t3', ['a2'], 15)]);
    expect(victims.map((v) => v.terminalId)).toEqual(['t2']);
    expect(victims[0]!.why).toContain('maxScratchPerAgent (16.0 MiB)');
    expect(victims[0]!.why).toContain('holds 19.0 MiB on disk');
  });

  it("counts sub-agents' terminals to their ancestors, and names the ancestor", () => {
    const victims = scratchVictims(roomy, limits, [use('t1', ['a1'], 6), use('t2', ['a1', 'sub'], 12)]);
    expect(victims).toHaveLength(1);
    expect(victims[0]!.terminalId).toBe('t2');
    expect(victims[0]!.why).toContain("its ancestor 'a1'");
  });

  it('closes once for a sub-agent over its own bound and its ancestor over the same', () => {
    const victims = scratchVictims(roomy, limits, [use('t1', ['a1'], 1), use('t2', ['a1', 'sub'], 20)]);
    expect(victims.map((v) => v.terminalId)).toEqual(['t2']);
    expect(victims[0]!.why).toContain('of its agent');
  });

  it('a walk that did not finish is past the bound, whatever it counted', () => {
    const unwalked = { ...use('t2', ['a1'], 1), complete: false };
    const victims = scratchVictims(roomy, limits, [use('t1', ['a1'], 10), unwalked]);
    expect(victims.map((v) => v.terminalId)).toEqual(['t2']);
    expect(victims[0]!.why).toContain('more than a check walks');
  });

  it('a share is of the disk size; 0 bounds nothing', () => {
    const small: DiskState = { ...roomy, sizeBytes: 100 * MiB };
    expect(scratchVictims(small, { maxPerAgent: '10%', reserve: 0 }, [use('t1', ['a1'], 11)])).toHaveLength(1);
    expect(scratchVictims(small, { maxPerAgent: 0, reserve: 0 }, [use('t1', ['a1'], 99)])).toEqual([]);
  });
});

describe('scratchVictims: the reserve', () => {
  const limits = { maxPerAgent: 0, reserve: 10 * GiB };
  const short: DiskState = { ...roomy, freeBytes: 9 * GiB };

  it('below it in bytes, closes the biggest holder, whoever it is', () => {
    const victims = scratchVictims(short, limits, [use('t1', ['a1'], 5), use('t2', ['a2'], 7)]);
    expect(victims.map((v) => v.terminalId)).toEqual(['t2']);
    expect(victims[0]!.why).toContain('scratchDiskReserve (10240.0 MiB)');
  });

  it('counts the files a terminal is writing (a workspace file) toward the reserve, not the agent bound', () => {
    const writer = { ...use('t2', ['a2'], 0), writing: 300 * MiB };
    const victims = scratchVictims(short, limits, [use('t1', ['a1'], 200), writer]);
    expect(victims.map((v) => v.terminalId)).toEqual(['t2']);
    expect(victims[0]!.why).toContain('is writing files of 300.0 MiB');
    const roomyWriter = { ...writer, writing: 10 * GiB };
    expect(scratchVictims(roomy, { maxPerAgent: 16 * MiB, reserve: 10 * GiB }, [roomyWriter])).toEqual([]);
  });

  it('counts what a terminal wrote since the last check (small files, each closed) toward the reserve only', () => {
    const writer = { ...use('t2', ['a2'], 0), wrote: 300 * MiB };
    const victims = scratchVictims(short, limits, [use('t1', ['a1'], 200), writer]);
    expect(victims.map((v) => v.terminalId)).toEqual(['t2']);
    expect(victims[0]!.why).toContain('its processes wrote 300.0 MiB to disk since the last check');
    // Under a MiB written, held and being written, nobody is blamed.
    expect(scratchVictims(short, limits, [{ ...use('t3', ['a3'], 0.25), wrote: 0.5 * MiB }])).toEqual([]);
    expect(scratchVictims(short, limits, [{ ...use('t3', ['a3'], 0.25), wrote: 0.8 * MiB }])).toHaveLength(1);
    // Writing fast is the agent's work while the disk keeps its reserve.
    expect(
      scratchVictims(roomy, { maxPerAgent: 16 * MiB, reserve: 10 * GiB }, [{ ...writer, wrote: 10 * GiB }]),
    ).toEqual([]);
  });

  it('with nobody to blame by count and the disk falling, closes a terminal whose processes hide their writes', () => {
    const hider = { ...use('t2', ['a2'], 0.1), hidden: 1 };
    const victims = scratchVictims(short, limits, [use('t1', ['a1'], 0.5), hider], 50 * MiB);
    expect(victims.map((v) => v.terminalId)).toEqual(['t2']);
    expect(victims[0]!.why).toContain('1 of this terminal');
    expect(victims[0]!.why).toContain('hide what they write');
    // The disk not falling, or falling by what was counted: nobody (the reserve may be short for another reason).
    expect(scratchVictims(short, limits, [hider])).toEqual([]);
    expect(scratchVictims(short, limits, [hider, { ...use('t3', ['a3'], 0), wrote: 0.5 * MiB }], MiB)).toEqual([]);
    // One that can be counted comes first; above the reserve, or short of inodes only, nobody.
    const counted = [use('t1', ['a1'], 5), hider];
    expect(scratchVictims(short, limits, counted, 50 * MiB).map((v) => v.terminalId)).toEqual(['t1']);
    expect(scratchVictims(roomy, limits, [hider], 50 * MiB)).toEqual([]);
    const fewInodes: DiskState = { ...roomy, freeInodes: 10 };
    expect(scratchVictims(fewInodes, { maxPerAgent: 0, reserve: '2%' }, [hider], 50 * MiB)).toEqual([]);
    // A terminal closed for the agent bound this check: the hider waits for the next.
    const both = { maxPerAgent: 16 * MiB, reserve: 10 * GiB };
    const over = scratchVictims(short, both, [use('t1', ['a1'], 20), hider], 50 * MiB);
    expect(over.map((v) => v.terminalId)).toEqual(['t1']);
  });

  it('closes no terminal holding under a MiB: the disk ran short for another reason', () => {
    expect(scratchVictims(short, limits, [use('t1', ['a1'], 0.5)])).toEqual([]);
  });

  it('at or above it, closes nothing', () => {
    expect(scratchVictims(roomy, limits, [use('t1', ['a1'], 500)])).toEqual([]);
  });

  it('a share bounds inodes too, and then the biggest holder of inodes is closed', () => {
    const fewInodes: DiskState = { ...roomy, freeInodes: 10_000 };
    const victims = scratchVictims(fewInodes, { maxPerAgent: 0, reserve: '2%' }, [
      use('t1', ['a1'], 900, 50),
      use('t2', ['a2'], 1, 9_000),
    ]);
    expect(victims.map((v) => v.terminalId)).toEqual(['t2']);
    expect(victims[0]!.why).toContain('10000 inodes free');
  });

  it('below it, a walk that did not finish is the biggest holder', () => {
    const unwalked = { ...use('t2', ['a2'], 0), complete: false };
    const victims = scratchVictims(short, limits, [use('t1', ['a1'], 500), unwalked]);
    expect(victims.map((v) => v.terminalId)).toEqual(['t2']);
  });

  it('a number of bytes says nothing of inodes', () => {
    expect(reserveShortOf({ ...roomy, freeInodes: 0 }, GiB)).toBeUndefined();
    expect(reserveShortOf({ ...roomy, freeInodes: 0 }, '1%')).toBe('inodes');
    expect(reserveShortOf({ ...roomy, freeBytes: 0 }, '1%')).toBe('bytes');
  });

  it('does not close the same terminal twice when the agent bound already chose it', () => {
    const victims = scratchVictims(short, { maxPerAgent: 16 * MiB, reserve: 10 * GiB }, [
      use('t1', ['a1'], 20),
      use('t2', ['a2'], 10),
    ]);
    expect(victims.map((v) => v.terminalId)).toEqual(['t1', 't2']);
  });
});
