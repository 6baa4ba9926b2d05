/**
 * @module
 * The edit corpus: real source files nobody here wrote (TypeScript and
 * JavaScript from pinned packages, Python from CPython's stdlib, and a
 * tab-indented rendering of a JS file), random unique spans of them, and the
 * perturbations models make when copying old_text (indent shifts, tabs vs
 * spaces, trailing whitespace, CRLF, a dropped blank line, a misspelled
 * line, smart quotes). Each case changes one line of the span; the check is
 * whether the edit lands exactly there, fails clearly, or lands elsewhere.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { applyEdits } from '../../machines/edit/edit-apply.ts';
import { normalizeLine } from '../../machines/edit/edit-text.ts';
import { seeded } from './edit-random.ts';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export const CORPUS_FILES: Array<{ name: string; path: string; tabs?: boolean }> = [
  { name: '@types/node fs.d.ts', path: here('../../node_modules/@types/node/fs.d.ts') },
  { name: 'zod core schemas.d.ts', path: here('../../node_modules/zod/v4/core/schemas.d.ts') },
  { name: 'zod core schemas.js', path: here('../../node_modules/zod/v4/core/schemas.js') },
  { name: 'commander command.js', path: here('../../node_modules/commander/lib/command.js') },
  { name: 'commander command.js (tabs)', path: here('../../node_modules/commander/lib/command.js'), tabs: true },
  { name: 'jsdiff patch/parse.js', path: here('../../node_modules/diff/libesm/patch/parse.js') },
  { name: 'pino proto.js', path: here('../../node_modules/pino/lib/proto.js') },
  { name: 'xstate StateMachine.esm.js', path: here('../../node_modules/xstate/dist/StateMachine-ae06a22b.esm.js') },
  { name: 'cpython textwrap.py', path: here('../fixtures/edits/corpus/textwrap.py') },
  { name: 'cpython json/decoder.py', path: here('../fixtures/edits/corpus/json_decoder.py') },
  { name: 'cpython json/encoder.py', path: here('../fixtures/edits/corpus/json_encoder.py') },
];

export type CorpusCase = {
  file: string;
  seed: number;
  perturbations: string[];
  buffer: string;
  oldText: string;
  newText: string;
  expected: string;
  /** 0-based line that carries the marker in `expected`. */
  markerLine: number;
};

export type CorpusOutcome = 'exact' | 'whitespace' | 'failed' | 'wrong';

export function loadCorpusFile(f: (typeof CORPUS_FILES)[number]): string {
  const text = readFileSync(f.path, 'utf8').replace(/\r\n/g, '\n');
  if (!f.tabs) return text;
  return text.replace(/^( {2})+/gm, (ws) => '\t'.repeat(ws.length / 2));
}

const MARKER = ' /* skein-corpus-marker */';

/** Builds `count` cases from `buffer` with the PRNG seeded by `seed`. */
export function makeCases(file: string, buffer: string, seed: number, count: number): CorpusCase[] {
  const random = seeded(seed);
  const lines = buffer.split('\n');
  const normalized = lines.map(normalizeLine).join('\n');
  const cases: CorpusCase[] = [];
  let attempts = 0;
  while (cases.length < count && attempts++ < count * 50) {
    const len = 3 + Math.floor(random() * 10);
    const start = Math.floor(random() * Math.max(1, lines.length - len));
    const span = lines.slice(start, start + len);
    const substantial = span.filter((l) => l.trim().length >= 8).length;
    if (substantial < 2 || span.length < len) continue;
    // Real models pick a span that is unique even ignoring whitespace (else no text could point at it).
    const key = span.map(normalizeLine).join('\n');
    if (normalized.indexOf(key) !== normalized.lastIndexOf(key)) continue;
    const candidates = span.map((l, i) => (l.trim().length > 0 ? i : -1)).filter((i) => i >= 0);
    const m = candidates[Math.floor(random() * candidates.length)]!;
    const newSpanLines = span.map((l, i) => (i === m ? l + MARKER : l));
    const expectedLines = [...lines];
    expectedLines[start + m] += MARKER;
    const { oldText, newText, perturbations } = perturb(span, newSpanLines, random);
    cases.push({
      file,
      seed,
      perturbations,
      buffer,
      oldText,
      newText,
      expected: expectedLines.join('\n'),
      markerLine: start + m,
    });
  }
  return cases;
}

type Lines = string[];
const SHARED = ['indent+4', 'indent-2', 'strip-first-indent', 'tabs<->spaces'] as const;
const OLD_ONLY = ['trailing-ws', 'crlf', 'drop-blank', 'misspell', 'misspell-short', 'smart-quotes-nbsp'] as const;

/** Applies 1-2 perturbations: whitespace style to both texts (the model's style), copy errors to old_text only. */
function perturb(
  oldL: Lines,
  newL: Lines,
  random: () => number,
): { oldText: string; newText: string; perturbations: string[] } {
  const all = [...SHARED, ...OLD_ONLY];
  const picks = new Set<string>();
  const n = 1 + Math.floor(random() * 2);
  while (picks.size < n) picks.add(all[Math.floor(random() * all.length)]!);
  let o = [...oldL];
  let nw = [...newL];
  const applied: string[] = [];
  for (const p of picks) {
    if (p === 'indent+4')
      [o, nw] = [o.map((l) => (l.trim() ? `    ${l}` : l)), nw.map((l) => (l.trim() ? `    ${l}` : l))];
    else if (p === 'indent-2') {
      const min = Math.min(...o.filter((l) => l.trim()).map((l) => /^[ \t]*/.exec(l)![0].length));
      if (min < 2 || o.some((l) => l.startsWith('\t'))) continue;
      [o, nw] = [o.map((l) => (l.trim() ? l.slice(2) : l)), nw.map((l) => (l.trim() ? l.slice(2) : l))];
    } else if (p === 'strip-first-indent') {
      o[0] = o[0]!.trimStart();
      nw[0] = nw[0]!.trimStart();
    } else if (p === 'tabs<->spaces') {
      const swap = (l: string) =>
        l.replace(/^[ \t]+/, (ws) =>
          ws.includes('\t')
            ? ws.replace(/\t/g, '    ')
            : '\t'.repeat(Math.floor(ws.length / 4)) + ' '.repeat(ws.length % 4),
        );
      [o, nw] = [o.map(swap), nw.map(swap)];
    } else if (p === 'trailing-ws') {
      // Not on a final '' (that is the span's closing newline, not a line).
      o = o.map((l, i) =>
        random() < 0.5 && !(i === o.length - 1 && l === '') ? `${l}${random() < 0.5 ? '  ' : '\t'}` : l,
      );
    } else if (p === 'crlf') {
      applied.push(p);
      continue; // applied when joining
    } else if (p === 'drop-blank') {
      // A blank line between two non-blank ones, dropped while copying old_text; new_text keeps it.
      const blanks = o
        .map((l, i) => (l.trim() === '' && i > 0 && i < o.length - 1 && o[i - 1]!.trim() && o[i + 1]!.trim() ? i : -1))
        .filter((i) => i >= 0);
      if (blanks.length === 0) continue;
      o.splice(blanks[Math.floor(random() * blanks.length)]!, 1);
    } else if (p === 'misspell' || p === 'misspell-short') {
      // One changed letter in a long line, or one changed character in a short line (`});` → `}):`).
      const short = p === 'misspell-short';
      const fits = (l: string) =>
        short ? l.trim().length >= 4 && l.trim().length < 12 : l.trim().length >= 12 && /[a-zA-Z]/.test(l);
      const long = o.map((l, i) => (fits(l) ? i : -1)).filter((i) => i >= 0);
      if (long.length === 0) continue;
      const i = long[Math.floor(random() * long.length)]!;
      const line = o[i]!;
      const letters = [...line.matchAll(short ? /\S/g : /[a-zA-Z]/g)].map((x) => x.index);
      const at = letters[Math.floor(random() * letters.length)]!;
      o[i] = line.slice(0, at) + (line[at] === 'e' ? 'a' : 'e') + line.slice(at + 1);
    } else if (p === 'smart-quotes-nbsp') {
      o = o.map((l) =>
        l
          .replace(/"([^"]*)"/g, '\u201c$1\u201d')
          .replace(/'/g, '\u2019')
          .replace(/ = /g, '\u00a0= '),
      );
    }
    applied.push(p);
  }
  const eol = applied.includes('crlf') ? '\r\n' : '\n';
  return { oldText: o.join(eol), newText: nw.join('\n'), perturbations: applied.length ? applied : ['none'] };
}

/** Applies one case and classifies where it landed. */
export function runCase(c: CorpusCase): { outcome: CorpusOutcome; message?: string } {
  const r = applyEdits(c.buffer, [{ oldText: c.oldText, newText: c.newText }]);
  if (r.failure) return { outcome: 'failed', message: r.failure.message };
  if (r.content === c.expected) return { outcome: 'exact' };
  const got = r.content.split('\n');
  const want = c.expected.split('\n');
  const norm = (l: string) => l.replace(/\s+/g, ' ').trim();
  if (got.length === want.length && got.every((l, i) => norm(l) === norm(want[i]!))) return { outcome: 'whitespace' };
  return { outcome: 'wrong' };
}

export type CorpusReport = {
  cases: number;
  exact: number;
  whitespace: number;
  failed: number;
  wrong: number;
  byPerturbation: Record<string, Record<CorpusOutcome, number>>;
  failures: string[];
};

export function runCorpus(seed: number, perFile: number): CorpusReport {
  const report: CorpusReport = {
    cases: 0,
    exact: 0,
    whitespace: 0,
    failed: 0,
    wrong: 0,
    byPerturbation: {},
    failures: [],
  };
  CORPUS_FILES.forEach((f, fi) => {
    const buffer = loadCorpusFile(f);
    for (const c of makeCases(f.name, buffer, seed + fi * 1009, perFile)) {
      const { outcome, message } = runCase(c);
      report.cases++;
      report[outcome]++;
      const key = c.perturbations.join('+');
      const row = (report.byPerturbation[key] ??= { exact: 0, whitespace: 0, failed: 0, wrong: 0 });
      row[outcome]++;
      if (outcome !== 'exact' && report.failures.length < 40)
        report.failures.push(
          `${outcome} ${c.file} line ${c.markerLine + 1} [${key}]${message ? `: ${message.slice(0, 100)}` : ''}`,
        );
    }
  });
  return report;
}
