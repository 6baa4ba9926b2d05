/**
 * @module
 * Reading an embedded log file on open, and repairing its tail. Only the end of
 * the file can be damaged by a crash or a full disk: a torn last line (no
 * newline: the process died mid-write) or a glued one (half a fact followed by
 * the next, which happens when a short write was not cut off). Such a tail was
 * never acknowledged; it is cut and reported, never fatal, so `skein up` always
 * starts. In a sealed log, a last line the seal does not verify (half a line or
 * NULs before the newline, a cut mac) is cut the same way, even if it decodes.
 * A bad line in the middle is reported and skipped, as replay does.
 */
import { closeSync, fsyncSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import type { Logger } from 'pino';
import type { StoredFact } from '../../schemas/index.ts';
import { decodeLogLine, encodeLogLine } from './codec.ts';
import type { UnsealedTail } from './jsonl-seal.ts';

export type LoadedLog = { facts: StoredFact[]; bytes: number };

/**
 * Decodes every line of `path`, cutting a damaged tail off the file (reported through `log`). `unsealed` is a
 * last line the seal refused (jsonl-seal.ts): it is cut too, even when it decodes, and never read as a fact.
 */
export function loadAndRepair(path: string, log: Logger | undefined, unsealed?: UnsealedTail): LoadedLog {
  const buffer = readFileSync(path);
  const end = unsealed?.offset ?? buffer.length;
  const facts: StoredFact[] = [];
  // Offsets are in bytes: a torn multi-byte character must not shift the cut.
  let good = 0;
  let start = 0;
  let skipped = 0;
  let salvaged: StoredFact | undefined;
  while (start < end) {
    const newline = buffer.indexOf(0x0a, start);
    if (newline === -1) break; // torn: no newline
    const line = buffer.subarray(start, newline).toString('utf8');
    start = newline + 1;
    if (line.length === 0) {
      good = start;
      continue;
    }
    const decoded = decodeSalvaging(path, line);
    if (decoded.fact && !decoded.damaged) {
      facts.push(decoded.fact);
      good = start;
      continue;
    }
    if (isLastLine(buffer, start, end)) {
      // A glued final line: the half fact before the glue was never acknowledged; the whole fact after
      // it may have been (by a version that acked short writes), so it is kept, on a line of its own.
      if (decoded.fact) salvaged = decoded.fact;
      break;
    }
    skipped++;
    good = start;
    if (decoded.fact) facts.push(decoded.fact);
    log?.error(
      { path, err: decoded.error, afterSeq: facts.at(-1)?.seq ?? 0, salvaged: decoded.fact !== undefined },
      'damaged line in the middle of the event log; export the log (skein replay --export) to inspect it',
    );
  }
  if (good < buffer.length) {
    const lastSeq = facts.at(-1)?.seq ?? 0;
    if (unsealed) {
      log?.warn(
        { path, bytes: buffer.length - good, lastSeq, line: unsealed.number, reason: unsealed.change },
        'unsealed last line of the event log cut off (never acknowledged: a crash mid-write, or not the host)',
      );
    } else {
      log?.warn(
        { path, bytes: buffer.length - good, lastSeq, skipped },
        'damaged tail of the event log cut off (never acknowledged: a crash or a full disk mid-write)',
      );
    }
    const fd = openSync(path, 'r+');
    try {
      ftruncateSync(fd, good);
      if (salvaged && salvaged.seq > (facts.at(-1)?.seq ?? 0)) {
        const line = Buffer.from(`${encodeLogLine(salvaged)}\n`);
        writeSync(fd, line, 0, line.length, good);
        fsyncSync(fd);
        facts.push(salvaged);
        good += line.length;
        log?.warn({ path, seq: salvaged.seq }, 'kept the whole fact glued after a torn one');
      }
    } finally {
      closeSync(fd);
    }
  }
  return { facts, bytes: good };
}

function isLastLine(buffer: Buffer, next: number, end: number): boolean {
  for (let i = next; i < end; i++) if (buffer[i] !== 0x0a) return false;
  return true;
}

/**
 * Decodes one log line. A line that does not decode but ends with a whole fact glued after a torn one
 * yields that fact, flagged `damaged` (replay and open must agree on what such a line holds).
 */
export function decodeSalvaging(path: string, line: string): { fact?: StoredFact; damaged: boolean; error?: string } {
  try {
    return { fact: decodeLogLine(path, line), damaged: false };
  } catch (err) {
    const error = (err as Error).message;
    const glued = line.lastIndexOf('{"seq":');
    if (glued <= 0) return { damaged: true, error };
    try {
      return { fact: decodeLogLine(path, line.slice(glued)), damaged: true, error };
    } catch {
      return { damaged: true, error };
    }
  }
}
