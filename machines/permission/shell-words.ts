/**
 * @module
 * The plain data a shell split produces (consumed by the pure policy), and
 * the pure word helpers the splitter uses: ANSI-C string decoding, brace
 * expansion over unquoted braces, and command-name canonicalization.
 */

/** One thing the shell would do, as the policy sees it. */
export type ShellSubCommand = {
  /**
   * `command`: a simple command (wrappers produce one entry for the wrapper
   * and one for the inner command); `redirect`: a file redirect such as
   * `> /etc/passwd`; `pipeline`: a whole pipeline of 2+ stages in canonical
   * form (`curl x | sh`), matched by deny/confirm rules only.
   */
  kind: 'command' | 'redirect' | 'pipeline';
  /** Canonical text: quotes removed, name canonical (`/bin/rm`, `\rm` → `rm`), env prefix kept. */
  text: string;
  /**
   * Every form the command may be read as (`text` first; also without the
   * env prefix, or with the raw path name). Deny/confirm: any form matching
   * counts; allow: every form must match.
   */
  forms: string[];
  /** Canonical argv (empty for redirects and pipelines). */
  argv: string[];
  /** How it was reached, e.g. `sudo`, `bash -c`, `find -exec`; absent at top level. */
  via?: string;
};

/** The result of splitting one shell input. Plain JSON. */
export type ShellSplit = {
  commands: ShellSubCommand[];
  /** Source text of each expansion/substitution found (`$HOME`, `$(id)`, `` `x` ``, `<(ls)`, `$((1))`, `${IFS}`). */
  unsafe: string[];
  /** Why the input could not be parsed reliably; set → allow is disabled and terminal denies. */
  parseError?: string;
  /** A function defined to start itself in the background or a pipeline: a fork bomb, denied by the built-in rules. */
  forkBomb?: string;
};

/** Directories whose binaries are the same command as their bare name. */
const STANDARD_BIN = /^\/(usr\/(local\/)?)?s?bin\/[^/]+$/;

/** Canonical command name: basename for paths, lowercase untouched. Returns the extra raw form when not standard. */
export function canonicalName(name: string): { name: string; raw?: string } {
  if (!name.includes('/')) return { name };
  const base = name.slice(name.lastIndexOf('/') + 1);
  if (!base) return { name };
  return STANDARD_BIN.test(name) ? { name: base } : { name: base, raw: name };
}

/** Decodes the body of `$'…'` as bash does. */
export function decodeAnsiC(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\' || i + 1 >= body.length) {
      out += c;
      continue;
    }
    const n = body[++i]!;
    const simple: Record<string, string> = {
      n: '\n',
      t: '\t',
      r: '\r',
      a: '\x07',
      b: '\b',
      e: '\x1b',
      E: '\x1b',
      f: '\f',
      v: '\v',
      '\\': '\\',
      "'": "'",
      '"': '"',
      '?': '?',
    };
    if (n in simple) out += simple[n];
    else if (n === 'x') {
      const m = /^[0-9a-fA-F]{1,2}/.exec(body.slice(i + 1));
      if (m) {
        out += String.fromCharCode(parseInt(m[0], 16));
        i += m[0].length;
      } else out += '\\x';
    } else if (n === 'u' || n === 'U') {
      const m = (n === 'u' ? /^[0-9a-fA-F]{1,4}/ : /^[0-9a-fA-F]{1,8}/).exec(body.slice(i + 1));
      if (m) {
        out += safeCodePoint(parseInt(m[0], 16));
        i += m[0].length;
      } else out += `\\${n}`;
    } else if (/[0-7]/.test(n)) {
      const m = /^[0-7]{1,3}/.exec(body.slice(i));
      out += String.fromCharCode(parseInt(m![0], 8) & 0xff);
      i += m![0].length - 1;
    } else if (n === 'c' && i + 1 < body.length) {
      out += String.fromCharCode(body.charCodeAt(++i) & 0x1f);
    } else out += `\\${n}`;
  }
  return out;
}

function safeCodePoint(cp: number): string {
  return cp <= 0x10ffff ? String.fromCodePoint(cp) : '\ufffd';
}

/** A word as segments; quoted segments never take part in brace expansion. */
export type WordSegment = { text: string; quoted: boolean };

const QUOTED_MARK: Record<string, string> = { '{': '\ue000', '}': '\ue001', ',': '\ue002', '.': '\ue003' };
const UNMARK: Record<string, string> = { '\ue000': '{', '\ue001': '}', '\ue002': ',', '\ue003': '.', '\ue004': '' };
/** Stands for a quoted empty segment (`''`, `""`), so a result holding one is no empty word. */
const QUOTED_EMPTY = '\ue004';

/**
 * Expands unquoted `{a,b}` and `{1..3}` in a word; `limit` caps the number of results. An expansion's result that
 * is empty and holds no quotes is dropped, as bash 5.2 drops it: `nice {,rm} x` runs `rm x` (`{'',rm}` keeps one).
 */
export function expandBraces(segments: WordSegment[], limit = 256): string[] | undefined {
  const marked = segments
    .map((s) => (s.quoted ? s.text.replace(/[{},.]/g, (c) => QUOTED_MARK[c]!) || QUOTED_EMPTY : s.text))
    .join('');
  if (!/[{]/.test(marked)) return [unmark(marked)];
  const results = expandMarked(marked, limit);
  return results?.filter((r) => r !== '').map(unmark);
}

function unmark(s: string): string {
  return s.replace(/[\ue000-\ue004]/g, (c) => UNMARK[c]!);
}

function expandMarked(word: string, limit: number): string[] | undefined {
  // Find the first `{` with a matching `}` that contains a top-level `,` or is a `..` sequence.
  for (let start = word.indexOf('{'); start >= 0; start = word.indexOf('{', start + 1)) {
    let depth = 0;
    const commas: number[] = [];
    let end = -1;
    for (let i = start; i < word.length; i++) {
      const c = word[i];
      if (c === '{') depth++;
      else if (c === '}') {
        depth--;
        if (depth === 0) {
          end = i;
          break;
        }
      } else if (c === ',' && depth === 1) commas.push(i);
    }
    // An unmatched `{` is literal; bash goes on to the next one (`{{a,b}` is `{a {b`).
    if (end < 0) continue;
    const pre = word.slice(0, start);
    const post = word.slice(end + 1);
    const body = word.slice(start + 1, end);
    let alternatives: string[] | undefined;
    if (commas.length > 0) {
      alternatives = [];
      let from = start + 1;
      for (const c of [...commas, end]) {
        alternatives.push(word.slice(from, c));
        from = c + 1;
      }
    } else {
      const seq = sequence(body, limit);
      if (seq === null) return undefined;
      alternatives = seq;
    }
    if (!alternatives) continue;
    const out: string[] = [];
    for (const alt of alternatives) {
      const expanded = expandMarked(pre + alt + post, limit);
      if (!expanded) return undefined;
      for (const e of expanded) {
        out.push(e);
        if (out.length > limit) return undefined;
      }
    }
    return out;
  }
  return [word];
}

/** `undefined`: not a sequence; `null`: more than `limit` items. */
function sequence(body: string, limit: number): string[] | undefined | null {
  const m = /^(-?\d+|[a-zA-Z])\.\.(-?\d+|[a-zA-Z])(\.\.(-?\d+))?$/.exec(body);
  if (!m) return undefined;
  const numeric = /\d/.test(m[1]!);
  const a = numeric ? Number(m[1]) : m[1]!.charCodeAt(0);
  const b = numeric ? Number(m[2]) : m[2]!.charCodeAt(0);
  if (numeric !== /\d/.test(m[2]!)) return undefined;
  const step = Math.max(1, Math.abs(Number(m[4] ?? 1)));
  if (Math.abs(b - a) / step > limit) return null;
  const out: string[] = [];
  for (let v = a; a <= b ? v <= b : v >= b; v += a <= b ? step : -step) {
    out.push(numeric ? String(v) : String.fromCharCode(v));
  }
  return out;
}
