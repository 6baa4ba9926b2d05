import fc from 'fast-check';
import { JsonScanner, MAX_JSON_DEPTH } from '../../../machines/edit/edit-json.ts';
import { type EditEvent, StreamingEditParser, ToolInputError } from '../../../machines/edit/edit-parser.ts';
import { randomChunks, seeded, seeds } from '../../support/edit-random.ts';
import { propertySeed } from '../../support/seed.ts';

const SEEDS = seeds(30);

/** Feeds chunks, finishes, and returns all events. */
function run(mode: 'edit' | 'write', chunks: readonly string[]): EditEvent[] {
  const p = new StreamingEditParser(mode);
  const out: EditEvent[] = [];
  for (const c of chunks) out.push(...p.push(c));
  out.push(...p.finish().events);
  return out;
}

/** Joins events into per-field texts and checks the done flags. */
function texts(events: EditEvent[]): { old: string[]; neu: string[]; content: string } {
  const old: string[] = [];
  const neu: string[] = [];
  let content = '';
  for (const e of events) {
    if (e.type === 'content') content += e.chunk;
    else if (e.type === 'old') old[e.index] = (old[e.index] ?? '') + e.chunk;
    else neu[e.index] = (neu[e.index] ?? '') + e.chunk;
  }
  return { old, neu, content };
}

describe('streaming parser', () => {
  it('emits old then new chunks per edit, done flags at string ends', () => {
    const events = run('edit', ['{"path":"a.ts","edits":[{"old_text":"x\\n', 'y","new_text":"z', 'w"}]}']);
    expect(events).toEqual([
      { type: 'old', index: 0, chunk: 'x', done: false },
      { type: 'old', index: 0, chunk: '\ny', done: true },
      { type: 'new', index: 0, chunk: 'z', done: false },
      { type: 'new', index: 0, chunk: 'w', done: true },
    ]);
  });

  it('holds a trailing backslash (incomplete escape) until the next chunk', () => {
    const p = new StreamingEditParser('edit');
    expect(p.push('{"edits":[{"old_text":"a\\')).toEqual([{ type: 'old', index: 0, chunk: 'a', done: false }]);
    expect(p.push('\\b')).toEqual([{ type: 'old', index: 0, chunk: '\\b', done: false }]);
  });

  it('holds a trailing newline of old/new text until text after it arrives', () => {
    const p = new StreamingEditParser('edit');
    expect(p.push('{"edits":[{"old_text":"a\\n')).toEqual([{ type: 'old', index: 0, chunk: 'a', done: false }]);
    // Only one trailing newline is held (zed): the first of two goes out.
    expect(p.push('\\n')).toEqual([{ type: 'old', index: 0, chunk: '\n', done: false }]);
    expect(p.push('b')).toEqual([{ type: 'old', index: 0, chunk: '\nb', done: false }]);
    expect(p.push('\\n"')).toEqual([{ type: 'old', index: 0, chunk: '\n', done: true }]);
  });

  it('a \\u escape split across chunks decodes once, whole', () => {
    const p = new StreamingEditParser('edit');
    expect(p.push('{"edits":[{"old_text":"caf\\u00')).toEqual([{ type: 'old', index: 0, chunk: 'caf', done: false }]);
    expect(p.push('e9!')).toEqual([{ type: 'old', index: 0, chunk: 'é!', done: false }]);
  });

  it('never splits a surrogate pair (escaped or raw)', () => {
    const p = new StreamingEditParser('edit');
    expect(p.push('{"edits":[{"old_text":"\\ud83e')).toEqual([]);
    expect(p.push('\\udd80x')).toEqual([{ type: 'old', index: 0, chunk: '🦀x', done: false }]);
    const crab = '🦀';
    expect(p.push(crab[0]!)).toEqual([]);
    expect(p.push(`${crab[1]!}y`)).toEqual([{ type: 'old', index: 0, chunk: '🦀y', done: false }]);
  });

  it('buffers new_text that arrives before old_text is complete', () => {
    const events = run('edit', ['{"edits":[{"new_text":"N1', 'N2","old_text":"O1', 'O2"}]}']);
    expect(events).toEqual([
      { type: 'old', index: 0, chunk: 'O1', done: false },
      { type: 'old', index: 0, chunk: 'O2', done: true },
      { type: 'new', index: 0, chunk: 'N1N2', done: true },
    ]);
  });

  it('accepts camelCase keys and edits given as a JSON string', () => {
    expect(texts(run('edit', ['{"edits":[{"oldText":"a","newText":"b"}]}']))).toEqual({
      old: ['a'],
      neu: ['b'],
      content: '',
    });
    const stringified = JSON.stringify({ path: 'x', edits: JSON.stringify([{ old_text: 'a\n', new_text: 'b\n' }]) });
    expect(run('edit', [stringified])).toEqual([
      { type: 'old', index: 0, chunk: 'a\n', done: true },
      { type: 'new', index: 0, chunk: 'b\n', done: true },
    ]);
  });

  it('done chunks keep trailing newlines', () => {
    expect(run('edit', ['{"edits":[{"old_text":"a\\n","new_text":"b\\n\\n"}]}']).filter((e) => e.done)).toEqual([
      { type: 'old', index: 0, chunk: 'a\n', done: true },
      { type: 'new', index: 0, chunk: 'b\n\n', done: true },
    ]);
  });

  it('write mode streams content, holding only incomplete escapes', () => {
    const p = new StreamingEditParser('write');
    expect(p.push('{"path":"a","content":"l1\\n')).toEqual([{ type: 'content', chunk: 'l1\n', done: false }]);
    expect(p.push('l2\\')).toEqual([{ type: 'content', chunk: 'l2', done: false }]);
    expect(p.push('"x"}')).toEqual([{ type: 'content', chunk: '"x', done: false }]);
    expect(p.finish().events).toEqual([{ type: 'content', chunk: '', done: true }]);
  });

  it('malformed JSON fails at finish naming the offset', () => {
    const p = new StreamingEditParser('edit');
    p.push('{"edits":[{"old_text":"a" "new_text":"b"}]}');
    expect(() => p.finish()).toThrowErrorMatchingInlineSnapshot(
      `[ToolInputError: The tool input is not valid JSON at offset 26: expected ` +
        `',' or '}' in an object, got "\\"". Send the complete JSON again.]`,
    );
  });

  it(`nesting deeper than MAX_JSON_DEPTH (${MAX_JSON_DEPTH}) fails at finish, and nothing after it is held`, () => {
    const ok = new JsonScanner({});
    ok.push(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`);
    expect(ok.error).toBeUndefined();
    expect(ok.complete).toBe(true);
    const p = new StreamingEditParser('edit');
    p.push('{"edits":');
    // Unbounded, each level was a frame held until it closed: 10 Mi of "[" held 673 MB.
    for (let i = 0; i < 10; i++) p.push('['.repeat(1 << 20));
    expect(() => p.finish()).toThrowError(
      `The tool input is not valid JSON at offset ${MAX_JSON_DEPTH + 8}: the input nests objects and arrays more ` +
        `than ${MAX_JSON_DEPTH} deep; a tool call's input is an object of strings and a list of edits. Send the ` +
        'complete JSON again.',
    );
  });

  it('truncated JSON fails at finish naming the offset and what is open', () => {
    const p = new StreamingEditParser('edit');
    p.push('{"edits":[{"old_text":"abc');
    let err: unknown;
    try {
      p.finish();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ToolInputError);
    expect((err as ToolInputError).offset).toBe(26);
    expect((err as Error).message).toBe(
      'The tool input is truncated at offset 26: it ends inside an ' +
        'unterminated string. Send the rest of the JSON before finishing.',
    );
  });

  it('an edit without new_text is refused at finish', () => {
    const p = new StreamingEditParser('edit');
    p.push('{"edits":[{"old_text":"a"}]}');
    expect(() => p.finish()).toThrow('Edit 0 has no "new_text" string. Give each edit an "old_text" and a "new_text".');
  });
});

describe('streaming parser over random chunkings', () => {
  const input = {
    path: 'src/a.ts',
    edits: [
      { old_text: 'line with \\ backslash\n\ttab "quote"\n', new_text: 'é — 。 🦀 \u0001\n\n' },
      { old_text: 'second\r\n', new_text: '' },
    ],
  };
  const raw = JSON.stringify(input);
  it.each(SEEDS)('reconstructs every field exactly, never emitting a partial escape (seed %i)', (seed) => {
    const events = run('edit', randomChunks(raw, seeded(seed), 5));
    expect(texts(events)).toEqual({
      old: input.edits.map((e) => e.old_text),
      neu: input.edits.map((e) => e.new_text),
      content: '',
    });
    for (const e of events) {
      expect(/[\ud800-\udbff]$/.test(e.chunk)).toBe(false);
    }
  });

  const seed = propertySeed();
  it(`every intermediate emission is a prefix of the final text (fast-check seed ${seed})`, () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.nat(), (oldText, newText, s) => {
        const raw2 = JSON.stringify({ edits: [{ old_text: oldText, new_text: newText }] });
        const t = texts(run('edit', randomChunks(raw2, seeded(s), 4)));
        expect(t.old[0] ?? '').toBe(oldText);
        expect(t.neu[0] ?? '').toBe(newText);
      }),
      { seed, numRuns: 200 },
    );
  });
});
