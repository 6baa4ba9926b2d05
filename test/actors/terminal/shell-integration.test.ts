import { existsSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import {
  commandInput,
  makeRcFile,
  MarkScanner,
  rcRemovals,
  writeRcFile,
  type Mark,
} from '../../../actors/terminal/shell-integration.ts';
import { utf8Length } from '../../../machines/terminal/terminal-text.ts';
import { propertySeed } from '../../support/seed.ts';

const seed = propertySeed();
const stream = 'é out\x1b]133;C\x07data ✓\n\x1b]7;file://h/tmp/a%20b\x07\x1b]133;D;3\x07\x1b]133;A\x07$ \x1b]133;B\x07';

function scanAll(chunks: string[]): Mark[] {
  const s = new MarkScanner();
  let offset = 0;
  const marks: Mark[] = [];
  for (const c of chunks) {
    marks.push(...s.feed(c, offset));
    offset += utf8Length(c);
  }
  return marks;
}

describe('MarkScanner', () => {
  it('finds C, cwd (decoded), D with exit status, A and B with byte offsets', () => {
    const marks = scanAll([stream]);
    expect(marks.map((m) => m.kind)).toEqual(['C', 'cwd', 'D', 'A', 'B']);
    expect(marks[1]).toMatchObject({ cwd: '/tmp/a b' });
    expect(marks[2]).toMatchObject({ exitCode: 3 });
    const c = marks[0]!;
    expect(Buffer.from(stream).subarray(c.start, c.end).toString()).toBe('\x1b]133;C\x07');
  });

  it(`finds the same marks however the stream is split (seed ${seed})`, () => {
    const whole = scanAll([stream]);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: stream.length }), { maxLength: 8 }), (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const chunks: string[] = [];
        let last = 0;
        for (const p of points) {
          chunks.push(stream.slice(last, p));
          last = p;
        }
        chunks.push(stream.slice(last));
        expect(scanAll(chunks)).toEqual(whole);
      }),
      { seed },
    );
  });
});

describe('commandInput', () => {
  it('types only a fixed line: abort any prefix (Ctrl-G), clear the prompt (Ctrl-E Ctrl-U), source the file', () => {
    expect(commandInput()).toBe('\x07\x05\x15\\. "$__sk"\r');
  });
});

describe('the command file', () => {
  it('holds exactly the last command written (a shorter one cuts the longer one off), mode 0600', () => {
    const rc = writeRcFile();
    try {
      rc.writeCommand('echo a long command é');
      rc.writeCommand('ls');
      expect(readFileSync(rc.commandPath, 'utf8')).toBe('ls');
      rc.writeCommand('printf "%s" ✓✓');
      expect(readFileSync(rc.commandPath, 'utf8')).toBe('printf "%s" ✓✓');
      expect(statSync(rc.commandPath).mode & 0o777).toBe(0o600);
    } finally {
      rc.remove();
    }
  });

  it('holds the last of any sequence of commands, cutting only when one is shorter (seeded)', () => {
    const rc = writeRcFile();
    try {
      fc.assert(
        fc.property(
          fc.array(fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }), { minLength: 1 }),
          (cmds) => {
            for (const c of cmds) rc.writeCommand(c);
            expect(readFileSync(rc.commandPath, 'utf8')).toBe(cmds.at(-1));
          },
        ),
        { seed, numRuns: 200 },
      );
    } finally {
      rc.remove();
    }
  });

  it('cuts a file put in its place that holds more than the command', () => {
    const rc = writeRcFile();
    try {
      rc.writeCommand('true');
      rmSync(rc.commandPath);
      writeFileSync(rc.commandPath, 'echo planted; echo more than the command', { mode: 0o600 });
      rc.writeCommand('true');
      expect(readFileSync(rc.commandPath, 'utf8')).toBe('true');
    } finally {
      rc.remove();
    }
  });

  it('is made again when something removed it, and never written through a symlink put in its place', () => {
    const rc = writeRcFile();
    const target = join(rc.dir, 'elsewhere');
    try {
      rc.writeCommand('true');
      rmSync(rc.commandPath);
      rc.writeCommand('echo again');
      expect(readFileSync(rc.commandPath, 'utf8')).toBe('echo again');
      writeFileSync(target, 'untouched');
      rmSync(rc.commandPath);
      symlinkSync(target, rc.commandPath);
      expect(() => rc.writeCommand('echo planted')).toThrow(/ELOOP/);
      expect(readFileSync(target, 'utf8')).toBe('untouched');
    } finally {
      rc.remove();
    }
  });
});

describe('the typeahead mark', () => {
  it('is set before input, emptied when the next command line is written, and guards the drain in the rc', () => {
    const rc = writeRcFile();
    const mark = () => (existsSync(rc.typeaheadPath) ? readFileSync(rc.typeaheadPath, 'utf8') : undefined);
    try {
      rc.writeCommand('true');
      expect(mark()).toBeUndefined();
      rc.markTypeahead();
      rc.markTypeahead();
      expect(mark()).toBe('1');
      rc.writeCommand('ls');
      expect(mark()).toBe('');
      rmSync(rc.typeaheadPath);
      rc.markTypeahead();
      expect(mark()).toBe('1');
      expect(statSync(rc.typeaheadPath).mode & 0o777).toBe(0o600);
      // While the host holds input it could not write yet, the mark says 2 (the drain reads on), then 1 again.
      rc.markBacklog(true);
      expect(mark()).toBe('2');
      rc.markBacklog(false);
      expect(mark()).toBe('1');
      // The drain (a read that waits out its timeout, 50 ms per prompt) runs only while the mark holds a byte.
      const rcText = readFileSync(rc.path, 'utf8');
      expect(rcText).toContain(
        `if [[ -s '${rc.typeaheadPath}' ]]; then\n    local __skein_rc=0 __skein_more=; ` +
          `builtin read -r -n 1 __skein_more < '${rc.typeaheadPath}' 2>/dev/null\n    while :; do\n`,
      );
      expect(rcText).toContain(`__skein_more=; builtin read -r -n 1 __skein_more < '${rc.typeaheadPath}'`);
      expect(rcText).not.toContain('@TYPEAHEAD@');
      expect(rcText).toContain("while builtin read -r -s -t 0.05 -n 65536 -d '' __skein_typeahead");
      rc.remove();
      expect(() => rc.markTypeahead()).not.toThrow();
    } finally {
      rc.remove();
    }
  });
});

describe('an rc directory', () => {
  it('is removed in the pool: gone once remove() resolves; rcRemovals() waits for every removal', async () => {
    const a = writeRcFile();
    const b = writeRcFile();
    a.writeCommand('echo a');
    b.markTypeahead();
    const removed = a.remove();
    void b.remove();
    // Begun, not done: the directory is still there in this turn.
    expect(existsSync(a.dir)).toBe(true);
    await rcRemovals();
    expect(existsSync(a.dir)).toBe(false);
    expect(existsSync(b.dir)).toBe(false);
    await expect(removed).resolves.toBeUndefined();
  });

  it('is made in the pool the same as on the loop: the same rc, mode 0600, in a directory of its own', async () => {
    const a = writeRcFile();
    const b = await makeRcFile();
    try {
      expect(b.dir).not.toBe(a.dir);
      expect(readFileSync(b.path, 'utf8')).toBe(readFileSync(a.path, 'utf8').replaceAll(a.dir, b.dir));
      expect(statSync(b.path).mode & 0o777).toBe(0o600);
      expect(statSync(b.dir).mode & 0o777).toBe(0o700);
      b.writeCommand('echo b');
      expect(readFileSync(b.commandPath, 'utf8')).toContain('echo b');
    } finally {
      await Promise.all([a.remove(), b.remove()]);
    }
  });
});
