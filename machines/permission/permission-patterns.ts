/**
 * @module
 * The rule an "always" answer learns: the narrowest one that covers the request. A terminal command
 * learns its exact command line, a file tool its exact workspace-relative path, other tools their exact
 * input, each as `(?-i)^<escaped text>$`: anchored at both ends, every regex metacharacter escaped, case
 * sensitive (a case-insensitive `^src/a\.ts$` would also cover `SRC/A.TS`, a different file). Pure.
 */

/** The longest rule a policy file accepts (schemas/policy.ts). */
const MAX_PATTERN_CHARS = 4096;

/** The prefix that makes a pattern case sensitive (policy.ts `compilePattern`). */
const CASE_SENSITIVE = '(?-i)';

/** Escapes regex metacharacters. */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The rule matching exactly `text` and nothing else; undefined when the text is empty, starts with `/` or
 * `..` when `path` (outside the workspace: such a path is never learned), or the rule would be too long.
 */
export function exactRule(text: string, kind: 'text' | 'path' = 'text'): string | undefined {
  if (text.length === 0) return undefined;
  if (kind === 'path' && (text.startsWith('/') || text === '..' || text.startsWith('../'))) return undefined;
  const rule = `${CASE_SENSITIVE}^${escapeRegex(text)}$`;
  return rule.length <= MAX_PATTERN_CHARS ? rule : undefined;
}

/** The text an exact rule matches (to show a person), or undefined when `pattern` is not an exact rule. */
export function exactText(pattern: string): string | undefined {
  if (!pattern.startsWith(`${CASE_SENSITIVE}^`) || !pattern.endsWith('$')) return undefined;
  const body = pattern.slice(CASE_SENSITIVE.length + 1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '\\') {
      const next = body[i + 1];
      if (next === undefined || !/[.*+?^${}()|[\]\\]/.test(next)) return undefined;
      out += next;
      i++;
    } else if (/[.*+?^${}()|[\]]/.test(c)) return undefined;
    else out += c;
  }
  return exactRule(out) === pattern ? out : undefined;
}
