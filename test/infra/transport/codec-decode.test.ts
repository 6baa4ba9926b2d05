/**
 * @module
 * The codec's decoders, one bad input at a time: each error names the field
 * or value and says what to do, and what decodes is exactly what was sent.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode, InvalidMessageError, MAX_JSON_DEPTH, type StoredFact } from '../../../schemas/index.ts';
import {
  decodeCommand,
  decodeFact,
  decodeFactEnvelope,
  decodeFrame,
  decodeJsonArgument,
  decodeLogLine,
  decodeReply,
  encode,
  encodeLogLine,
  formatIssues,
} from '../../../infra/transport/codec.ts';
import * as z from 'zod';

const SUBJECT = 'skein.cmd.main.agent.spawn';
const bytes = (text: string) => new TextEncoder().encode(text);

function failure(run: () => unknown): { name: string; code: string; message: string } {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidMessageError);
    const e = err as InvalidMessageError;
    return { name: e.name, code: e.code, message: e.message };
  }
  throw new Error('expected the decoder to throw');
}

describe('decodeCommand', () => {
  it('decodes a full envelope as sent', () => {
    const body = { id: 'c-1', causationId: 'x-1', at: '2026-01-01T00:00:00.000Z', data: { label: 'a' } };
    const { command, def } = decodeCommand(SUBJECT, encode(body), 1024);
    expect(def.type).toBe('agent.spawn');
    expect(command).toEqual({
      id: 'c-1',
      type: 'agent.spawn',
      agentId: 'main',
      causationId: 'x-1',
      at: '2026-01-01T00:00:00.000Z',
      data: expect.objectContaining({ label: 'a' }),
    });
  });

  it("keeps the caller's waitMs (the gate's caller deadline), and adds no waitMs key without one", () => {
    const ping = (body: object) => decodeCommand('skein.cmd.main.runtime.ping', bytes(JSON.stringify(body)), 1024);
    expect(ping({ id: 'c-1', at: '2026-01-01T00:00:00.000Z', waitMs: 1500 }).command).toStrictEqual({
      id: 'c-1',
      type: 'runtime.ping',
      agentId: 'main',
      causationId: undefined,
      at: '2026-01-01T00:00:00.000Z',
      waitMs: 1500,
      data: {},
    });
    expect(Object.keys(ping({}).command)).not.toContain('waitMs');
  });

  it('fills a missing id (c-<uuid>) and time (now), and takes a missing data as {}', () => {
    const before = Date.now();
    const { command } = decodeCommand('skein.cmd.main.runtime.ping', bytes('{}'), 1024);
    expect(command.id).toMatch(/^c-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(Date.parse(command.at)).toBeGreaterThanOrEqual(before - 1);
    expect(Date.parse(command.at)).toBeLessThanOrEqual(Date.now() + 1);
    expect(command.data).toEqual({});
    expect(command.causationId).toBeUndefined();
    const other = decodeCommand('skein.cmd.main.runtime.ping', bytes('{}'), 1024).command;
    expect(other.id).not.toBe(command.id);
  });

  it('refuses a null data, not read as no fields (agent.cancel of the caller, review.reject of all)', () => {
    for (const type of ['agent.cancel', 'review.reject', 'review.accept', 'runtime.ping']) {
      expect(failure(() => decodeCommand(`skein.cmd.main.${type}`, bytes('{"data":null}'), 1024))).toMatchObject({
        code: ErrorCode.InvalidMessage,
        message: expect.stringMatching(/^Invalid message on '[^']+': data: is null; send an object/),
      });
    }
    expect(decodeCommand('skein.cmd.main.review.reject', bytes('{"data":{}}'), 1024).command.data).toEqual({});
  });

  it("refuses a '__proto__' key anywhere, naming where (a copied record lost it: a deny rule vanished)", () => {
    const policy = '{"data":{"layer":"project","policy":{"tools":{"__proto__":{"terminal":{"always_deny":["x"]}}}}}}';
    expect(failure(() => decodeCommand('skein.cmd.main.policy.set', bytes(policy), 4096))).toMatchObject({
      code: ErrorCode.InvalidMessage,
      message: expect.stringContaining("data.policy.tools.__proto__: the key '__proto__' is not taken"),
    });
    const env = '{"data":{"env":{"A":"1","__proto__":"x"}}}';
    expect(failure(() => decodeCommand('skein.cmd.main.terminal.open', bytes(env), 4096))).toMatchObject({
      message: expect.stringContaining('data.env.__proto__:'),
    });
    // A value that says __proto__ is only text.
    expect(decodeCommand('skein.cmd.main.agent.spawn', bytes('{"data":{"label":"__proto__"}}'), 4096)).toBeTruthy();
  });

  it('refuses a yieldMs past a day (a timer that long fired at once: the exec replied running after 1 ms)', () => {
    const exec = (yieldMs: number) => bytes(JSON.stringify({ data: { terminalId: 't-1', command: 'true', yieldMs } }));
    expect(failure(() => decodeCommand('skein.cmd.main.terminal.exec', exec(2 ** 53 - 1), 4096))).toMatchObject({
      message: expect.stringMatching(/data\.yieldMs: must be at most 86400000 ms \(a day\)/),
    });
    expect(decodeCommand('skein.cmd.main.terminal.exec', exec(86_400_000), 4096).command.data).toMatchObject({
      yieldMs: 86_400_000,
    });
  });

  it("checks a terminal's cwd and a sub-agent's workspace as paths (a NUL, a lone surrogate), naming the field", () => {
    const open = bytes(JSON.stringify({ data: { cwd: 'src\ud800' } }));
    expect(failure(() => decodeCommand('skein.cmd.main.terminal.open', open, 4096))).toMatchObject({
      message: expect.stringContaining('data.cwd: contains a lone surrogate (U+D800 at index 3)'),
    });
    const spawn = bytes(JSON.stringify({ data: { label: 'x', workspace: 'sub\u0000/x' } }));
    expect(failure(() => decodeCommand('skein.cmd.main.agent.spawn', spawn, 4096))).toMatchObject({
      message: expect.stringContaining('data.workspace: contains a NUL byte'),
    });
  });

  it('accepts a body type and agentId that agree with the subject', () => {
    const body = { type: 'agent.spawn', agentId: 'main', data: { label: 'a' } };
    expect(decodeCommand(SUBJECT, encode(body), 1024).command.type).toBe('agent.spawn');
  });

  it.each([
    [
      'a payload over the limit, by a single byte',
      SUBJECT,
      `{"data":{"label":"${'x'.repeat(101 - 21)}"}}`,
      ErrorCode.PayloadTooLarge,
      "Invalid message on 'skein.cmd.main.agent.spawn': payload is 101 bytes, over the limit of 100 bytes " +
        '(limits.maxPayloadBytes); send less data per command',
    ],
    [
      'a subject outside skein.cmd',
      'skein.evt.main.agent.spawn',
      '{}',
      ErrorCode.InvalidSubject,
      "Invalid message on 'skein.evt.main.agent.spawn': expected skein.cmd.<agentId>.<command type>",
    ],
    [
      'a bad agent id',
      'skein.cmd.a*b.agent.spawn',
      '{}',
      ErrorCode.InvalidSubject,
      "Invalid message on 'skein.cmd.a*b.agent.spawn': agent id 'a*b' is not valid: expected 1-64 characters " +
        'from [A-Za-z0-9_-]',
    ],
    [
      'an unknown command',
      'skein.cmd.main.agent.teleport',
      '{}',
      ErrorCode.UnknownCommand,
      "Invalid message on 'skein.cmd.main.agent.teleport': unknown command type 'agent.teleport'; run " +
        '`skein schema agent.teleport` for the close matches',
    ],
    [
      'a body whose type disagrees',
      SUBJECT,
      '{"type":"agent.get","data":{}}',
      ErrorCode.InvalidMessage,
      "Invalid message on 'skein.cmd.main.agent.spawn': type 'agent.get' in the body disagrees with 'agent.spawn' " +
        "in the subject; drop the body's type or send it on its own subject",
    ],
    [
      'a body whose agentId disagrees',
      SUBJECT,
      '{"agentId":"other","data":{}}',
      ErrorCode.AgentMismatch,
      "Invalid message on 'skein.cmd.main.agent.spawn': agentId 'other' in the body disagrees with 'main' in the " +
        'subject; an agent may only send on its own subjects',
    ],
    [
      'text that is not JSON',
      SUBJECT,
      '{"data":',
      ErrorCode.InvalidJson,
      new RegExp(
        "^Invalid message on 'skein\\.cmd\\.main\\.agent\\.spawn': payload is not JSON \\(.+\\); " +
          'send a JSON object such as \\{"data":\\{\\}\\}$',
      ),
    ],
  ])('refuses %s with a message that says what to do', (_name, subject, payload, code, message) => {
    const f = failure(() => decodeCommand(subject, bytes(payload), 100));
    expect(f.code).toBe(code);
    if (typeof message === 'string') expect(f.message).toBe(message);
    else expect(f.message).toMatch(message);
  });

  it('takes a payload of exactly the limit', () => {
    const payload = `{"data":{"label":"${'x'.repeat(100 - 21)}"}}`;
    expect(bytes(payload).byteLength).toBe(100);
    expect(decodeCommand(SUBJECT, bytes(payload), 100).command.data).toMatchObject({ label: 'x'.repeat(79) });
  });

  it('refuses bytes that are not UTF-8', () => {
    const f = failure(() => decodeCommand(SUBJECT, new Uint8Array([0x7b, 0xff, 0x7d]), 100));
    expect(f).toEqual({
      name: 'InvalidMessageError',
      code: ErrorCode.InvalidJson,
      message: "Invalid message on 'skein.cmd.main.agent.spawn': payload is not valid UTF-8; send JSON text",
    });
  });

  it('refuses a body nested deeper than MAX_JSON_DEPTH, naming where; takes exactly the limit', () => {
    const complete = 'skein.cmd.main.agent.complete';
    // The body is level 1, data 2, result 3: a result of `levels` arrays reaches 2 + levels.
    const body = (levels: number) => `{"data":{"result":${'['.repeat(levels)}1${']'.repeat(levels)}}}`;
    const atLimit = decodeCommand(complete, bytes(body(MAX_JSON_DEPTH - 2)), 1 << 20);
    expect(JSON.stringify(atLimit.command.data)).toBe(body(MAX_JSON_DEPTH - 2).slice(8, -1));
    const f = failure(() => decodeCommand(complete, bytes(body(MAX_JSON_DEPTH - 1)), 1 << 20));
    expect(f.code).toBe(ErrorCode.InvalidMessage);
    expect(f.message).toBe(
      `Invalid message on '${complete}': data.result[0][0][0][0].…[0]: nested more than ${MAX_JSON_DEPTH} levels of ` +
        'objects and arrays; send a flatter value (a deep structure can travel as a JSON string)',
    );
    // Far past what recursive code survives (JSON.stringify overflows at ~5,000): refused, no stack overflow.
    const objects = `{"data":{"result":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}}`;
    expect(failure(() => decodeCommand(complete, bytes(objects), 1 << 21)).message).toMatch(
      /: data\.result\.a\.a\.a\.a\.…\.a: nested more than 64 levels/,
    );
  });

  it('names the envelope field and the data field that are wrong', () => {
    expect(failure(() => decodeCommand(SUBJECT, bytes('{"id":42}'), 1024))).toMatchObject({
      code: ErrorCode.InvalidMessage,
      message: expect.stringMatching(/^Invalid message on '[^']+': id: /),
    });
    expect(failure(() => decodeCommand(SUBJECT, bytes('{"data":{"label":7}}'), 1024))).toMatchObject({
      code: ErrorCode.InvalidMessage,
      message: expect.stringMatching(/^Invalid message on '[^']+': data\.label: /),
    });
  });
});

const stored: StoredFact = {
  id: 'c-1:0',
  type: 'agent.completed',
  at: '2026-01-01T00:00:00.000Z',
  agentId: 'main',
  causationId: 'c-1',
  data: { agentId: 'a1', result: { n: 1 } },
  seq: 3,
  subject: 'skein.evt.main.agent.a1',
} as unknown as StoredFact;

describe('log lines', () => {
  it('encodes { seq, subject, fact } and decodes it back to the same stored fact', () => {
    const line = encodeLogLine(stored);
    expect(Object.keys(JSON.parse(line) as object)).toEqual(['seq', 'subject', 'fact']);
    expect(JSON.parse(line)).toEqual({
      seq: 3,
      subject: 'skein.evt.main.agent.a1',
      fact: {
        id: 'c-1:0',
        type: 'agent.completed',
        at: '2026-01-01T00:00:00.000Z',
        agentId: 'main',
        causationId: 'c-1',
        data: { agentId: 'a1', result: { n: 1 } },
      },
    });
    expect(decodeLogLine('log:1', line)).toEqual(stored);
  });

  it('refuses a line without a positive integer seq, naming the source and field', () => {
    const line = JSON.stringify({ seq: 0, subject: 's', fact: {} });
    expect(failure(() => decodeLogLine('events.jsonl:7', line)).message).toMatch(
      /^Invalid message on 'events\.jsonl:7': seq: /,
    );
  });

  it("checks a known fact's data and names the field", () => {
    const bad = { ...stored, data: { agentId: 'a1', result: 1, extra: 1 }, at: 'yesterday' };
    expect(failure(() => decodeLogLine('l', encodeLogLine(bad))).message).toMatch(/^Invalid message on '[^']+': at: /);
    const badData = encodeLogLine({ ...stored, type: 'agent.spawned' } as StoredFact);
    expect(failure(() => decodeLogLine('l', badData)).message).toMatch(/data\.\w+: /);
  });

  it('keeps the data of a fact type this version does not know, unchecked', () => {
    const future = { ...stored, type: 'agent.levitated', data: { anything: [1, 2] } } as unknown as StoredFact;
    expect(decodeLogLine('l', encodeLogLine(future))).toEqual(future);
    expect(decodeFact('s', bytes(JSON.stringify({ ...future, seq: undefined, subject: undefined })))).toMatchObject({
      type: 'agent.levitated',
      data: { anything: [1, 2] },
    });
  });
});

describe('fact envelopes', () => {
  const fact = { id: 'c-1:0', type: 'agent.completed', at: '2026-01-01T00:00:00.000Z', agentId: 'main', data: {} };

  it('decodeFactEnvelope returns a fact as sent and refuses anything else, naming the subject', () => {
    expect(decodeFactEnvelope('skein.evt.x', encode(fact))).toEqual(fact);
    for (const bad of [{ ...fact, id: '' }, { ...fact, extra: 1 }, [fact], 'fact']) {
      expect(failure(() => decodeFactEnvelope('skein.evt.x', encode(bad)))).toEqual({
        name: 'InvalidMessageError',
        code: ErrorCode.InvalidMessage,
        message: "Invalid message on 'skein.evt.x': expected a fact: { id, type, at, agentId, data }",
      });
    }
  });

  it('refuses an id that is not a string, though its text would pass (an array, a number)', () => {
    for (const id of [['c-1:0'], 7]) {
      expect(() => decodeFactEnvelope('s', encode({ ...fact, id }))).toThrow(/expected a fact/);
      expect(() => decodeFact('s', encode({ ...fact, id }))).toThrow(/^Invalid message on 's': id: /);
    }
  });
});

describe('decodeReply', () => {
  it('returns a success as sent, and a failure as { ok: false, error }', () => {
    expect(decodeReply('r', encode({ ok: true, n: 1 }))).toEqual({ ok: true, n: 1 });
    const error = { code: 'not_found', message: 'no such agent', retryable: false };
    expect(decodeReply('r', encode({ ok: false, error }))).toEqual({ ok: false, error });
  });

  it.each([[{ ok: 'yes' }], [{ ok: false }], [[1]], [null], [{ n: 1 }]])('refuses %j', (value) => {
    expect(failure(() => decodeReply('r', encode(value)))).toMatchObject({
      code: ErrorCode.InvalidMessage,
      message: "Invalid message on 'r': a reply must be { ok: true, ... } or { ok: false, error }",
    });
  });
});

describe('frames, arguments and issues', () => {
  it('decodes each socket frame and refuses an unknown op', () => {
    const frames = [
      { op: 'sub', sid: 1, subject: 'a.>' },
      { op: 'unsub', sid: 1 },
      { op: 'pub', subject: 'a', data: 'eA==' },
      { op: 'req', rid: 2, subject: 'a', data: '', timeoutMs: 5 },
      { op: 'msg', sid: 1, subject: 'a', data: '' },
      { op: 'res', rid: 2, data: '' },
      { op: 'err', rid: 2, code: 'timeout', message: 'slow' },
    ];
    for (const f of frames) expect(decodeFrame(JSON.stringify(f))).toEqual(f);
    expect(failure(() => decodeFrame('{"op":"nope"}')).message).toMatch(/^Invalid message on 'socket': op: /);
  });

  it('decodes the handshake frames, real subjects and every error code; refuses a token over 512 characters', () => {
    const frames = [
      { op: 'hello', token: 't'.repeat(512) },
      { op: 'hello', token: 'skt_1' },
      { op: 'welcome', identity: 'agent-1' },
      { op: 'violation', message: 'may not publish to skein.cmd.main.x' },
      { op: 'pub', subject: 'skein.cmd.main.runtime.ping', data: '' },
      { op: 'req', rid: 3, subject: 'skein.cmd.main.runtime.ping', data: '', timeoutMs: 1000 },
      ...['no_responders', 'timeout', 'failed', 'permission', 'auth'].map((code) => ({
        op: 'err',
        rid: 4,
        code,
        message: code,
      })),
    ];
    for (const f of frames) expect(decodeFrame(JSON.stringify(f))).toEqual(f);
    expect(failure(() => decodeFrame(JSON.stringify({ op: 'hello', token: 't'.repeat(513) }))).message).toMatch(
      /^Invalid message on 'socket': token: /,
    );
    expect(failure(() => decodeFrame('{"op":"err","rid":1,"code":"other","message":""}')).message).toMatch(/code/);
    expect(failure(() => decodeFrame('{"op":')).message).toMatch(/^Invalid message on 'socket': payload is not JSON/);
    expect(failure(() => decodeFrame('{"op":"req","rid":1,"subject":"a","data":"","timeoutMs":0}')).message).toMatch(
      /timeoutMs/,
    );
    expect(failure(() => decodeFrame('{"op":"sub","sid":1,"subject":""}')).message).toMatch(/subject/);
  });

  it('parses a JSON argument, naming it when it is not JSON, with the hint given for it', () => {
    expect(decodeJsonArgument('data', '{"a":[1]}', 'h')).toEqual({ a: [1] });
    expect(failure(() => decodeJsonArgument('--data', '{a}', 'give {"x":1}')).message).toMatch(
      /^Invalid message on '--data': payload is not JSON \(.*\); give \{"x":1\}$/,
    );
  });

  it('formats issues as path: message joined by "; ", with (root) and a prefix', () => {
    const schema = z.object({ a: z.object({ b: z.number() }), c: z.string() });
    const error = schema.safeParse({ a: { b: 'x' }, c: 1 }).error!;
    expect(formatIssues(error)).toMatch(/^a\.b: [^;]+; c: [^;]+$/);
    expect(formatIssues(error, 'data')).toMatch(/^data\.a\.b: [^;]+; data\.c: [^;]+$/);
    expect(formatIssues(z.string().safeParse(1).error!)).toMatch(/^\(root\): /);
  });
});
