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
import { JsonThread, OrderedJsonParse } from '../../../infra/transport/json-thread.ts';
import { parseJson } from '../../../infra/transport/wire.ts';
import { propertySeed } from '../../support/seed.ts';

const log = pino({ level: 'silent' });
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
    const parsed = await thread.parse(payload);
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
      const parsed = await thread.parse(write(content), 1024);
      const utf8 = Buffer.from(content, 'utf8');
      expect({ name, value: parsed?.value }).toEqual({ name, value: { data: { path: 'f', content } } });
      expect({ name, equal: parsed?.content?.bytes.equals(utf8), sha256: parsed?.content?.sha256 }).toEqual({
        name,
        equal: true,
        sha256: sha(utf8),
      });
    }
    // Under the length given, or not well-formed (it would not encode back to itself): no bytes.
    expect(await thread.parse(write('short'.repeat(300)), 2048)).toEqual({
      value: { data: { path: 'f', content: 'short'.repeat(300) } },
    });
    const lone = `${'z'.repeat(4096)}\ud800`;
    expect(await thread.parse(write(lone), 1024)).toEqual({ value: { data: { path: 'f', content: lone } } });
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
