/**
 * JsonThread parses big payloads on a worker thread with the result the host's own parse gives (property
 * test over any JSON value, seed printed), leaves small ones to the caller without starting a worker, and
 * gives `undefined` for a payload it cannot parse, so that decodeCommand's own parse names the error.
 * decodeCommand with a payload parsed off-thread gives the same command as without.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeCommand } from '../../../infra/transport/codec.ts';
import { contentHead, JsonThread, OrderedJsonParse, type Parsed } from '../../../infra/transport/json-thread.ts';
import { detectLineEnding } from '../../../actors/edit/file-io.ts';
import { parseJson } from '../../../infra/transport/wire.ts';
import { propertySeed } from '../../support/seed.ts';

const log = pino({ level: 'silent' });
/** The parsed value (not the bytes of a payload the worker could not parse). */
const parsedOf = (p: Parsed | undefined) => (p && 'value' in p ? p : undefined);
const bytes = (s: string) => new TextEncoder().encode(s);
let thread: JsonThread | undefined;

afterEach(async () => {
  await thread?.close();
  thread = undefined;
});

describe('JsonThread', () => {
  it('leaves a payload under its threshold to the caller and starts no worker', async () => {
    thread = new JsonThread(log, 1024);
    expect(thread.offThread(1023)).toBe(false);
    expect(await thread.parse(bytes('{"a":1}'))).toBeUndefined();
    expect(thread.running).toBe(false);
  });

  it('parses a 3 MB file.write on the worker as the host would, byte order marks and all', async () => {
    thread = new JsonThread(log);
    const content = 'line ✓ with ünïcode\n'.repeat(150_000);
    const payload = bytes(`\uFEFF${JSON.stringify({ id: 'w1', data: { path: 'big.txt', content } })}`);
    expect(payload.byteLength).toBeGreaterThan(3_000_000);
    const parsed = parsedOf(await thread.parse(payload));
    expect(thread.running).toBe(true);
    expect(parsed?.value).toEqual(parseJson('s', payload));
    const off = decodeCommand('skein.cmd.main.file.write', payload, 64 * 1024 * 1024, parsed);
    const on = decodeCommand('skein.cmd.main.file.write', payload, 64 * 1024 * 1024);
    // `at` is the time of decoding when the client sent none; everything else is the same command.
    expect({ ...off.command, at: '' }).toEqual({ ...on.command, at: '' });
    expect(off.def).toBe(on.def);
    expect((off.command.data as { content: string }).content).toBe(content);
  });

  it('gives a big data.content as its UTF-8 bytes and sha256 too, ASCII or not; never a lone surrogate', async () => {
    thread = new JsonThread(log, 1024);
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    const write = (content: string) => bytes(JSON.stringify({ data: { path: 'f', content } }));
    const cases = {
      ascii: 'plain ascii line\r\n'.repeat(20_000),
      bomAndCrlf: `\uFEFF${'x\r\ny\n'.repeat(20_000)}`,
      unicode: `${'ünï 😀 ✓\n'.repeat(10_000)}`,
      nul: `a\u0000b\n`.repeat(20_000),
    };
    for (const [name, content] of Object.entries(cases)) {
      const parsed = parsedOf(await thread.parse(write(content), { contentChars: 1024 }));
      const utf8 = Buffer.from(content, 'utf8');
      expect({ name, value: parsed?.value }).toEqual({ name, value: { data: { path: 'f', content } } });
      expect({ name, equal: parsed?.content?.bytes.equals(utf8), sha256: parsed?.content?.sha256 }).toEqual({
        name,
        equal: true,
        sha256: sha(utf8),
      });
    }
    // Under the length given, or not well-formed (it would not encode back to itself): no bytes.
    expect(await thread.parse(write('short'.repeat(300)), { contentChars: 2048 })).toEqual({
      value: { data: { path: 'f', content: 'short'.repeat(300) } },
    });
    const lone = `${'z'.repeat(4096)}\ud800`;
    expect(await thread.parse(write(lone), { contentChars: 1024 })).toEqual({
      value: { data: { path: 'f', content: lone } },
    });
  });

  it('gives undefined for bad UTF-8 or bad JSON, so the caller throws the error that names it', async () => {
    thread = new JsonThread(log, 16);
    const notJson = bytes(`{"data": {"content": "${'x'.repeat(64)}"`);
    const badUtf8 = new Uint8Array([...bytes('{"data":"'), 0xff, 0xfe, ...bytes('x'.repeat(32)), ...bytes('"}')]);
    expect(await thread.parse(notJson)).toBeUndefined();
    expect(await thread.parse(badUtf8)).toBeUndefined();
    expect(() => decodeCommand('skein.cmd.main.file.write', notJson, 1 << 20)).toThrow(/payload is not JSON/);
    expect(() => decodeCommand('skein.cmd.main.file.write', badUtf8, 1 << 20)).toThrow(/not valid UTF-8/);
    // The worker is still there for the next payload.
    expect(await thread.parse(bytes(`{"k":"${'y'.repeat(32)}"}`))).toEqual({ value: { k: 'y'.repeat(32) } });
  });

  it('only copies its own bytes out of a view on a larger buffer, and leaves the caller its payload', async () => {
    thread = new JsonThread(log, 8);
    const whole = bytes(`garbage{"inner":[1,2,3],"s":"ok"}more garbage`);
    const view = whole.subarray(7, 7 + '{"inner":[1,2,3],"s":"ok"}'.length);
    expect(await thread.parse(view)).toEqual({ value: { inner: [1, 2, 3], s: 'ok' } });
    expect(new TextDecoder().decode(view)).toBe('{"inner":[1,2,3],"s":"ok"}');
  });

  it('gives what the host parse gives for any JSON value (property, seed printed)', async () => {
    thread = new JsonThread(log, 0);
    const t = thread;
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        const payload = bytes(JSON.stringify(value));
        expect(await t.parse(payload)).toEqual({ value: parseJson('s', payload) });
      }),
      { seed: propertySeed(), numRuns: 200 },
    );
  });

  it('answers every pending parse with undefined when closed, and starts again after', async () => {
    thread = new JsonThread(log, 0);
    const pending = thread.parse(bytes(JSON.stringify({ s: 'z'.repeat(1 << 20) })));
    await thread.close();
    expect(await pending).toBeUndefined();
    expect(await thread.parse(bytes('[1]'))).toEqual({ value: [1] });
  });
});

describe('JsonThread with payloads it may move', () => {
  const DYING = new URL('../../support/dying-json-worker.mjs', import.meta.url);
  const command = (content: string) => bytes(JSON.stringify({ id: 'c1', data: { path: 'f', content } }));

  it('moves an owned payload (the caller is left an empty one) and copies any other', async () => {
    thread = new JsonThread(log, 16);
    const owned = command('m'.repeat(4096));
    const shared = command('s'.repeat(4096));
    expect(parsedOf(await thread.parse(owned, { owned: true }))?.value).toEqual(
      parseJson('s', command('m'.repeat(4096))),
    );
    expect(parsedOf(await thread.parse(shared))?.value).toEqual(parseJson('s', shared));
    expect({ owned: owned.byteLength, shared: shared.byteLength }).toEqual({ owned: 0, shared: shared.byteLength });
    // A view on a larger buffer is never moved, even when said to be owned.
    const whole = bytes(`xx${JSON.stringify({ k: 'v'.repeat(64) })}`);
    expect(parsedOf(await thread.parse(whole.subarray(2), { owned: true }))?.value).toEqual({ k: 'v'.repeat(64) });
    expect(whole.byteLength).toBeGreaterThan(64);
  });

  it('gives back the bytes of an owned payload it cannot parse, for the caller to name the error', async () => {
    thread = new JsonThread(log, 16);
    const text = `{"data": {"content": "${'x'.repeat(64)}"`;
    const answer = await thread.parse(bytes(text), { owned: true });
    expect(answer && 'unparsed' in answer ? new TextDecoder().decode(answer.unparsed) : answer).toBe(text);
  });

  it('fails a moved payload whose worker died with a retryable unavailable, and starts a new worker', async () => {
    thread = new JsonThread(log, 16, DYING);
    const doomed = command(`die-here ${'d'.repeat(4096)}`);
    const size = doomed.byteLength;
    const lost = await thread.parse(doomed, { owned: true }).catch((err: unknown) => err);
    expect(lost).toMatchObject({ code: 'unavailable', retryable: true });
    expect((lost as Error).message).toBe(
      `the JSON thread stopped while it parsed this command's ${size}-byte payload, which was lost with it ` +
        '(worker thread exited with code 3); nothing of the command was done: send it again',
    );
    // A copied payload the worker died with is still the caller's: it parses it itself.
    expect(await thread.parse(command(`die-here ${'e'.repeat(4096)}`))).toBeUndefined();
    const next = command('n'.repeat(4096));
    expect(parsedOf(await thread.parse(next, { owned: true }))?.value).toEqual({
      id: 'c1',
      data: { path: 'f', content: 'n'.repeat(4096) },
    });
    expect(thread.offThread(1 << 20)).toBe(true);
  });

  it("finds in a big content what the edit kernel asks (file-io's rules), and its head from the bytes", async () => {
    thread = new JsonThread(log, 16);
    const cases = {
      ascii: 'plain\n'.repeat(40_000),
      crlf: 'win\r\n'.repeat(40_000),
      mixed: `${'a\r\n'.repeat(20_000)}b\n`,
      lone: `${'c\r'.repeat(40_000)}`,
      bomNul: `\uFEFF${'n\u0000\n'.repeat(40_000)}`,
      // Pieces of 1 MiB end on a character boundary, a 4-byte one included; the head cuts no pair in two.
      unicode: `${'ü😀\n'.repeat(300_000)}`,
    };
    for (const [name, content] of Object.entries(cases)) {
      const parsed = parsedOf(await thread.parse(command(content), { owned: true, contentChars: 1024 }));
      const text = (parsed?.value as { data?: { content: string } } | undefined)?.data?.content;
      expect({ name, same: parsed?.content?.text === text, equal: text === content }).toEqual({
        name,
        same: true,
        equal: true,
      });
      expect({ name, facts: parsed?.content?.facts }).toEqual({
        name,
        facts: {
          cr: content.includes('\r'),
          crlf: content.includes('\r\n'),
          nul: content.includes('\0'),
          bom: content.charCodeAt(0) === 0xfeff,
          lineEnding: detectLineEnding(content),
        },
      });
      for (const chars of [1, 2, 3, 1000, 16_384]) {
        expect({ name, chars, head: contentHead(parsed!.content!, chars) }).toEqual({
          name,
          chars,
          head: content.slice(0, chars),
        });
      }
    }
  });
});

describe('OrderedJsonParse', () => {
  it("starts an agent's tool calls in order behind its big parse; reads and other agents do not wait", async () => {
    thread = new JsonThread(log, 1024);
    const parser = new OrderedJsonParse(thread, 1 << 24);
    const big = bytes(JSON.stringify({ s: 'b'.repeat(4 << 20) }));
    const order: string[] = [];
    const note = (name: string, p: Promise<unknown> | undefined) => p?.then(() => order.push(name));
    // A small read or a small tool call with nothing before it: parsed by the caller, at once.
    expect(parser.parse('a', false, bytes('{}'))).toBeUndefined();
    expect(parser.parse('a', true, bytes('{}'))).toBeUndefined();
    const first = note('a: big tool call', parser.parse('a', true, big));
    const second = note('a: small tool call', parser.parse('a', true, bytes('{"n":1}')));
    // A read of the same agent and another agent's tool call do not queue behind a's parse.
    expect(parser.parse('a', false, bytes('{}'))).toBeUndefined();
    expect(parser.parse('b', true, bytes('{}'))).toBeUndefined();
    await Promise.all([first, second]);
    expect(order).toEqual(['a: big tool call', 'a: small tool call']);
    // Once a's queue is drained, a small tool call is the caller's again.
    await new Promise((r) => setImmediate(r));
    expect(parser.parse('a', true, bytes('{}'))).toBeUndefined();
  });
});
