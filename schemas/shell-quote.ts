/**
 * @module
 * Quoting a word for a POSIX shell, the one way every layer does it. Pure.
 * It lives in `schemas/` (not `machines/`) because the tool-call declarations
 * on CommandDefs render env and worker command lines with it, and schemas
 * import nothing above them.
 */

/** Characters a word may hold and still be read by the shell as itself. */
const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * The word as the shell will read it back exactly: left bare when it holds only
 * safe characters, else in single quotes (a `'` inside becomes `'\''`).
 */
export function shellQuote(word: string): string {
  return SAFE_WORD.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
