import { PLAIN_CHUNK_BYTES, TerminalOutput, type OutputFact } from '../../../actors/terminal/terminal-output.ts';
import { createLogger } from '../../../infra/kernel/log.ts';
import { plainText } from '../../../machines/terminal/terminal-text.ts';
import { TerminalId } from '../../../schemas/ids.ts';

const COALESCE = 4096;

/** A TerminalOutput whose appends complete only when the test says so (the log falling behind). */
function output(coalesceMs = 60_000) {
  const facts: OutputFact[] = [];
  const pending: Array<() => void> = [];
  const out = new TerminalOutput({
    terminalId: TerminalId.parse('t1'),
    agentId: 'main',
    cols: 80,
    rows: 24,
    coalesceBytes: COALESCE,
    coalesceMs,
    highWaterChunks: 1_000,
    maxRetainedBytes: 1024 * 1024,
    emitOutput: (fact) => {
      facts.push(fact);
      return new Promise<void>((resolve) => pending.push(resolve));
    },
    pause: () => undefined,
    resume: () => undefined,
    respond: () => undefined,
    log: createLogger({ level: 'silent' }),
  });
  const settle = async () => {
    while (pending.length > 0) {
      pending.shift()!();
      await new Promise((r) => setImmediate(r));
    }
  };
  return { out, facts, settle };
}

/** Lets the screen parse and emitOutput run for every chunk flushed so far. */
const tick = () => new Promise((r) => setImmediate(r));

describe('TerminalOutput coalescing', () => {
  // Issue 15: a flood's facts were 64 KiB whenever the log kept up, which it did: growing only while appends
  // were in flight left every chunk at coalesceBytes.
  it('grows plain-text chunks up to PLAIN_CHUNK_BYTES with the log caught up, and loses no byte', async () => {
    const { out, facts, settle } = output();
    const read = 'a'.repeat(1024);
    const total = 2 * PLAIN_CHUNK_BYTES + 3 * COALESCE;
    for (let sent = 0; sent < total; sent += read.length) {
      out.push(read);
      await tick();
      await settle(); // every append done before the next read
      expect(out.backlog).toBe(0);
    }
    const last = out.flush();
    await settle();
    await last;
    expect(facts.map((f) => f.data.bytes)).toEqual([PLAIN_CHUNK_BYTES, PLAIN_CHUNK_BYTES, 3 * COALESCE]);
    expect(facts.map((f) => f.data.offset)).toEqual([0, PLAIN_CHUNK_BYTES, 2 * PLAIN_CHUNK_BYTES]);
    expect(facts.map((f) => f.data.data).join('')).toBe('a'.repeat(total));
    out.dispose();
  });

  it('grows plain-text chunks the same while appends are in flight', async () => {
    const { out, facts, settle } = output();
    const read = 'a'.repeat(1024);
    const total = 2 * PLAIN_CHUNK_BYTES + 3 * COALESCE;
    for (let sent = 0; sent < total; sent += read.length) out.push(read);
    await tick();
    const last = out.flush();
    await settle();
    await last;
    expect(facts.map((f) => f.data.bytes)).toEqual([PLAIN_CHUNK_BYTES, PLAIN_CHUNK_BYTES, 3 * COALESCE]);
    expect(facts.map((f) => f.data.data).join('')).toBe('a'.repeat(total));
    out.dispose();
  });

  it('keeps chunks with control sequences at coalesceBytes, log behind or not', async () => {
    const { out, facts, settle } = output();
    const read = `\x1b[1m${'b'.repeat(1020)}`;
    for (let i = 0; i < 40; i++) out.push(read);
    await tick();
    await settle();
    await out.flush();
    await settle();
    expect(Math.max(...facts.map((f) => f.data.bytes))).toBeLessThanOrEqual(COALESCE);
    expect(facts.map((f) => f.data.data).join('')).toBe(read.repeat(40));
    // The chunk's plainness, known from its reads, still sends control bytes through the full plainText.
    expect(facts.map((f) => f.data.plainText)).toEqual(facts.map((f) => plainText(f.data.data)));
    expect(facts[0]!.data.plainText).not.toContain('\x1b');
    out.dispose();
  });

  it('sends a plain chunk smaller than PLAIN_CHUNK_BYTES at the coalesce timer, log behind or not', async () => {
    const { out, facts, settle } = output(30);
    out.push('c'.repeat(COALESCE + 10));
    await tick();
    expect(facts).toEqual([]);
    await vi.waitFor(() => expect(facts.map((f) => f.data.bytes)).toEqual([COALESCE + 10]));
    out.push('d'.repeat(COALESCE + 20)); // while the first append is still in flight
    await vi.waitFor(() => expect(facts.map((f) => f.data.bytes)).toEqual([COALESCE + 10, COALESCE + 20]));
    await settle();
    out.dispose();
  });
});

describe('TerminalOutput JSON hint', () => {
  it('marks a chunk jsonSafe only when every read was plain text without " \\ CR or LF', async () => {
    const { out, facts, settle } = output();
    const cases = [['abc', 'def'], ['abc', 'd"f'], ['a\\c'], ['line\r\n'], ['x\ty'], ['\x1b[1mB'], ['é']];
    for (const reads of cases) {
      for (const r of reads) out.push(r);
      void out.flush();
    }
    await tick();
    await settle();
    expect(facts.map((f) => f.jsonSafe === true)).toEqual([true, false, false, false, false, false, false]);
    out.dispose();
  });
});

describe('TerminalOutput flush', () => {
  // Issue 15: a command's output tail is appended in the same turn as its terminal.command.finished (one socket
  // write for both), not a microtask later behind a write of its own.
  it('asks for the append within the call, with the chunk already parsed, when nothing waits ahead of it', () => {
    const { out, facts } = output();
    out.push('\x1b]133;D;0\x07\x1b[1;32muser\x1b[0m$ \x1b]133;B\x07');
    void out.flush();
    expect(facts.map((f) => [f.data.offset, f.data.sequenceCount, f.data.sequences.map((s) => s.kind)])).toEqual([
      [0, 4, ['osc', 'sgr', 'sgr', 'osc']],
    ]);
    out.dispose();
  });

  it('keeps stream order behind a resize still to be applied, then asks within the call again', async () => {
    const { out, facts } = output();
    out.push('one\r\n');
    void out.resize(100, 30); // flushes 'one' at once, then queues the resize on the screen
    out.push('two\r\n');
    void out.flush(); // behind the queued resize: parsed after it, in order
    expect(facts.map((f) => f.data.data)).toEqual(['one\r\n']);
    await tick();
    expect(facts.map((f) => f.data.data)).toEqual(['one\r\n', 'two\r\n']);
    expect(out.screen.term.cols).toBe(100);
    out.push('three\r\n');
    void out.flush();
    expect(facts.map((f) => f.data.data)).toEqual(['one\r\n', 'two\r\n', 'three\r\n']);
    expect(facts.map((f) => f.data.offset)).toEqual([0, 5, 10]);
    out.dispose();
  });
});
