/**
 * @module
 * The seal of the embedded audit log (`events.jsonl`): every line the host
 * writes ends with `"mac"`, an HMAC-SHA256 chained over the line before it,
 * under a key in `<data>/auth/log.key` (0600; the data dir is outside the
 * workspace and hidden from the sandbox). `<data>/auth/log-seal.json` keeps
 * the last sequence and MAC, moved after every durable batch. At open a line
 * the host did not write (no MAC, a wrong one, or out of chain), a changed or
 * removed line, a shorter or missing log, or a missing key or seal stops the
 * host with an error that says what changed and how to recover (a key with no
 * seal and no sealed line is a first start cut short, finished): a fresh log
 * is never begun silently. The one exception is a last line past the sealed
 * sequence (never acknowledged: a power loss mid-batch leaves half a line or
 * NULs before its newline): it is cut on open, never read as a fact. What it
 * cannot stop is a process of the same user that reads the key (see README,
 * "Known limits").
 */
import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { chmod, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import * as z from 'zod';
import { writeStartFile } from './disk-errors.ts';
import { LogTamperedError } from './log-seal.ts';

const SealState = z.object({
  /** Lines before this sequence were written before the log was sealed (an older skein); not checked. */
  sealedFrom: z.number().int().min(1),
  lastSeq: z.number().int().min(0),
  lastMac: z.string().regex(/^[0-9a-f]{64}$/),
});
type SealState = z.infer<typeof SealState>;

const MAC_TAIL = /,"mac":"([0-9a-f]{64})"\}$/;
const HOST_SEQ = /^\{"seq":([1-9]\d{0,15}),"subject":/;

export class JsonlSeal {
  readonly #key: Buffer;
  readonly #statePath: string;
  readonly #log: Logger | undefined;
  #state: SealState;
  /** The seal file being written (off the event loop), and whether a newer state waits for it. */
  #writing: Promise<void> | undefined;
  #dirty = false;
  /** A broken last line past the seal, found on open: the log cuts it there (loadAndRepair) and reports it. */
  readonly tail: UnsealedTail | undefined;

  private constructor(key: Buffer, statePath: string, state: SealState, log?: Logger, tail?: UnsealedTail) {
    this.#key = key;
    this.#statePath = statePath;
    this.#state = state;
    this.#log = log;
    this.tail = tail;
  }

  /**
   * Checks `logPath` against the key and seal in `dir` (before the log is opened or created) and returns
   * the sealer for new lines. Throws LogTamperedError with what changed and how to recover.
   */
  static open(logPath: string, dir: string, log?: Logger): JsonlSeal {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    const keyPath = join(dir, 'log.key');
    const statePath = join(dir, 'log-seal.json');
    const lines = existsSync(logPath) ? readLines(logPath) : undefined;
    const hasKey = existsSync(keyPath);
    const hasState = existsSync(statePath);
    const tampered = (changes: string[], what = 'is not the one this host sealed') =>
      new LogTamperedError(
        `the embedded audit log ${logPath} ${what}: ${changes.join('; ')}. ` +
          'skein will not begin or continue a log that lost facts or holds facts it did not write. Restore ' +
          `${logPath} (and ${dir}) from a backup and start again; or, to start over knowingly, export what ` +
          `is left (skein replay --from-file ${logPath} --export <file>) and move ${logPath}, ${keyPath} and ` +
          `${statePath} away.`,
      );
    if (!hasKey || !hasState) {
      const sealedLine = lines?.find((l) => MAC_TAIL.test(l.text));
      // A key without a seal and no sealed line: a first start (or first seal of an older log) stopped between
      // the two writes below (a full disk, a kill). Nothing was sealed with that key; the start is done again.
      if (hasState || sealedLine) {
        throw tampered([
          `${hasKey ? statePath : keyPath} is missing${sealedLine ? ` but line ${sealedLine.number} is sealed` : ''}`,
        ]);
      }
      // A new data dir, or a log an older skein wrote: sealed from its next line on, once its lines are in order.
      const key = randomBytes(32);
      const legacy = verifyChain(lines ?? [], key, { sealedFrom: Number.MAX_SAFE_INTEGER, lastSeq: 0, lastMac: '' });
      if (legacy.changes.length > 0) throw tampered(legacy.changes, 'cannot be sealed (an older skein wrote it)');
      const { lastSeq } = legacy;
      if (hasKey)
        log?.warn({ path: keyPath }, 'finishing a first start of the log seal (log-seal.json was never written)');
      if (lastSeq > 0) log?.warn({ path: logPath, lastSeq }, 'sealing an event log written before logs were sealed');
      writeStartFile(keyPath, `${key.toString('hex')}\n`, 'the key of the log seal');
      const state = { sealedFrom: lastSeq + 1, lastSeq, lastMac: genesis(key) };
      const seal = new JsonlSeal(key, statePath, state, log, legacy.tail);
      seal.#save();
      return seal;
    }
    const key = readKey(keyPath);
    const state = readState(statePath);
    if (!lines) {
      if (state.lastSeq > 0) throw tampered([`the log is gone (it held facts up to sequence ${state.lastSeq})`]);
      return new JsonlSeal(key, statePath, state, log);
    }
    const checked = verifyChain(lines, key, state);
    if (checked.changes.length > 0) throw tampered(checked.changes);
    const { lastSeq, lastMac } = checked;
    // Lines past the seal with a valid chain were written by the host just before it stopped (the seal
    // is moved after each batch is durable, not with it).
    const seal = new JsonlSeal(key, statePath, { ...state, lastSeq, lastMac }, log, checked.tail);
    seal.#save();
    return seal;
  }

  /** Seals `bare` lines (encodeLogLine output) in order; nothing is recorded until `commit`. */
  seal(bare: string[]): { lines: string[]; lastMac: string } {
    let prev = this.#state.lastMac;
    const lines = bare.map((line) => {
      prev = chain(this.#key, prev, line);
      return `${line.slice(0, -1)},"mac":"${prev}"}`;
    });
    return { lines, lastMac: prev };
  }

  /**
   * Moves the seal once the batch ending at `lastSeq` is durable. The next batch chains from the new state at
   * once; the seal file follows off the event loop, one write at a time, the latest state each time. A write
   * and rename over the old seal blocked the host 1-4 ms per batch (1.3 s of 1,000 recorded reads); the seal
   * lagging the log is what open already accepts (lines past it with a valid chain, after a crash).
   */
  commit(lastSeq: number, lastMac: string): void {
    this.#state = { ...this.#state, lastSeq, lastMac };
    if (this.#writing) this.#dirty = true;
    else this.#writing = this.#writeLater();
  }

  /** Resolves once the seal file holds the last committed state (or its write failed and was logged). */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  async #writeLater(): Promise<void> {
    do {
      this.#dirty = false;
      const text = `${JSON.stringify(this.#state)}\n`;
      const tmp = `${this.#statePath}.tmp`;
      try {
        await writeFile(tmp, text, { mode: 0o600 });
        await chmod(tmp, 0o600);
        await rename(tmp, this.#statePath);
      } catch (err) {
        // The facts are durable and chained; only the record of where the log ends lags (a shorter log
        // would go unnoticed until a later write moves it). Tried again with the next batch.
        this.#log?.error({ err, path: this.#statePath }, 'log seal not moved');
      }
    } while (this.#dirty);
    this.#writing = undefined;
  }

  #save(): void {
    writeStartFile(this.#statePath, `${JSON.stringify(this.#state)}\n`, 'the log seal');
  }
}

/**
 * Read-only: what differs between `logPath` and the seal in `dir` (empty when nothing); undefined when the
 * log was never sealed there (no key and no seal). `skein replay` reports it.
 */
export function checkJsonlSeal(logPath: string, dir: string): string[] | undefined {
  const keyPath = join(dir, 'log.key');
  const statePath = join(dir, 'log-seal.json');
  if (!existsSync(keyPath) && !existsSync(statePath)) return undefined;
  if (!existsSync(keyPath) || !existsSync(statePath)) {
    const sealedLine = existsSync(logPath) && readLines(logPath).some((l) => MAC_TAIL.test(l.text));
    // A key alone over a log with no sealed line: a first start cut short (the next start finishes it).
    if (existsSync(keyPath) && !sealedLine) return undefined;
    return [`${existsSync(keyPath) ? statePath : keyPath} is missing`];
  }
  const state = readState(statePath);
  if (!existsSync(logPath)) return state.lastSeq > 0 ? [`the log is gone (sealed up to ${state.lastSeq})`] : [];
  const checked = verifyChain(readLines(logPath), readKey(keyPath), state);
  // Replay would read that last line; open cuts it.
  return checked.tail ? [`${checked.tail.change} (the last line: cut on the next start)`] : checked.changes;
}

/** A line of the log: its number (from 1), its text without the newline, and the byte it starts at. */
type Line = { number: number; text: string; offset: number };

/**
 * The last line, past the sealed sequence, when it does not verify: never acknowledged (the seal moves only
 * after a batch is durable), so it is cut on open and never read as a fact.
 */
export type UnsealedTail = { number: number; offset: number; change: string };

type Checked = { changes: string[]; lastSeq: number; lastMac: string; tail?: UnsealedTail | undefined };

/**
 * Walks the MAC chain of `lines`; `changes` names the first line that breaks it, or a log cut short. Only lines
 * before the first sealed one may be unsealed (an older skein wrote them, below `sealedFrom`); every sequence
 * must be a positive integer above the one before it. A last line that breaks it after every line up to the
 * seal's last sequence verified is the `tail` a power loss mid-batch leaves (half a line, NULs, a cut mac, then
 * a newline): the chain ends before it. Cutting it gives someone editing the file nothing they lacked: lines past
 * a lagging seal could already be dropped, and the line itself is never taken for a fact.
 */
function verifyChain(lines: Line[], key: Buffer, state: SealState): Checked {
  let lastMac = genesis(key);
  let lastSeq = 0;
  let lastLine = 0;
  let sealed = false;
  let sealedMacAtLast: string | undefined;
  let tail: UnsealedTail | undefined;
  const refuse = (change: string) => ({ changes: [change], lastSeq, lastMac });
  const foreign = 'it was altered, moved, or written by someone other than the host';
  /** Checks one line and moves the chain past it; else what is wrong with it (the chain is left as it was). */
  const follow = (line: Line): string | undefined => {
    const match = MAC_TAIL.exec(line.text);
    let seq: number | undefined;
    let mac = lastMac;
    if (match) {
      const bare = `${line.text.slice(0, match.index)}}`;
      mac = chain(key, lastMac, bare);
      if (match[1] !== mac) {
        const shown = shownSeq(line.text);
        return `line ${line.number} (sequence ${shown}) does not carry the seal the host wrote: ${foreign}`;
      }
      // The MAC proves the host wrote these bytes, in encodeLogLine's shape: its sequence leads the line.
      seq = hostSeqOf(bare);
    } else {
      const parsed = unsealedSeqOf(line.text);
      if (typeof parsed === 'number' && (sealed || parsed >= state.sealedFrom)) {
        return `line ${line.number} (sequence ${parsed}) has no seal: ${foreign}`;
      }
      if (typeof parsed !== 'number') return `line ${line.number} is not a fact (${parsed.error}): ${foreign}`;
      seq = parsed;
    }
    if (seq === undefined) return `line ${line.number} is not a fact (no sequence): ${foreign}`;
    if (seq <= lastSeq) {
      return (
        `line ${line.number} (sequence ${seq}) does not follow sequence ${lastSeq} (line ${lastLine}): ` +
        'a fact was repeated or moved, or written by someone other than the host'
      );
    }
    lastSeq = seq;
    lastLine = line.number;
    lastMac = mac;
    if (match) sealed = true;
    if (seq === state.lastSeq && match) sealedMacAtLast = mac;
    return undefined;
  };
  for (const [i, line] of lines.entries()) {
    const change = follow(line);
    if (change === undefined) continue;
    if (i < lines.length - 1) return refuse(change);
    tail = { number: line.number, offset: line.offset, change };
  }
  // A broken last line that the seal covers (the chain then ends short of it) is refused for what it is.
  if (lastSeq < state.lastSeq) {
    return refuse(tail?.change ?? `shorter: last sequence ${lastSeq} (sealed up to ${state.lastSeq})`);
  }
  if (state.lastSeq >= state.sealedFrom && sealedMacAtLast !== state.lastMac) {
    return refuse(tail?.change ?? `the line at sequence ${state.lastSeq} is not the one sealed`);
  }
  return { changes: [], lastSeq, lastMac, tail };
}

function chain(key: Buffer, prev: string, line: string): string {
  return createHmac('sha256', key).update(prev).update('\n').update(line).digest('hex');
}

function genesis(key: Buffer): string {
  return createHmac('sha256', key).update('skein events.jsonl').digest('hex');
}

function readKey(path: string): Buffer {
  const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'hex');
  if (key.length !== 32) throw new LogTamperedError(`${path} is not a log key (64 hex characters); restore it`);
  return key;
}

function readState(path: string): SealState {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new LogTamperedError(`${path} is not valid JSON (${(err as Error).message}); restore it from a backup`);
  }
  const parsed = SealState.safeParse(raw);
  if (!parsed.success) throw new LogTamperedError(`${path} is not a log seal; restore it from a backup`);
  return parsed.data;
}

/** The whole lines of `path`; a torn last one (no newline: never acknowledged) is cut on open, not judged. */
function readLines(path: string): Line[] {
  const buffer = readFileSync(path);
  const lines: Line[] = [];
  let offset = 0;
  for (let number = 1; ; number++) {
    const end = buffer.indexOf(0x0a, offset);
    if (end === -1) break;
    if (end > offset) lines.push({ number, text: buffer.toString('utf8', offset, end), offset });
    offset = end + 1;
  }
  return lines;
}

/** The sequence leading a line the host sealed (`{"seq":N,"subject":…`); undefined if it does not lead. */
function hostSeqOf(bare: string): number | undefined {
  const seq = HOST_SEQ.exec(bare)?.[1];
  return seq === undefined ? undefined : Number(seq);
}

/**
 * The sequence of an unsealed line, read as replay reads it (JSON, wherever the key stands; a line glued after
 * a torn one, which an older skein could leave, counts as the whole fact after the glue); else why not.
 */
function unsealedSeqOf(text: string): number | { error: string } {
  const seqIn = (json: string) => {
    const seq = (JSON.parse(json) as { seq?: unknown } | null)?.seq;
    return Number.isSafeInteger(seq) && (seq as number) > 0 ? (seq as number) : { error: `sequence ${String(seq)}` };
  };
  try {
    return seqIn(text);
  } catch (err) {
    const glued = text.lastIndexOf('{"seq":');
    try {
      if (glued > 0) return seqIn(text.slice(glued));
    } catch {
      // Reported as the whole line's error below.
    }
    return { error: (err as Error).message };
  }
}

/** A line's sequence for an error message only (it was refused; nothing is trusted from it). */
function shownSeq(text: string): string {
  const found = unsealedSeqOf(text);
  return typeof found === 'number' ? String(found) : '?';
}
