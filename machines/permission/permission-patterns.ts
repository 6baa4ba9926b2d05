/**
 * @module
 * Zed-style patterns for "always" answers: a terminal command gives
 * `^cargo\s+build(\s|$)` (command + first non-flag word) or `^cargo\b`
 * (env prefixes become optional groups, so every form still matches);
 * path-like commands (`./x`) give none; a redirect gives its exact text; a
 * file path gives `^{parent dir}/` (none at the root); other tools give the
 * exact input. Pure.
 */
import type { ShellSubCommand } from './shell-words.ts';

/** Escapes regex metacharacters. */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The pattern for one sub-command, or undefined when none can be extracted. */
export function commandPattern(entry: ShellSubCommand): string | undefined {
  if (entry.kind === 'redirect') return `^${escapeRegex(entry.text).replace(/ /g, '\\s+')}$`;
  if (entry.kind !== 'command' || entry.argv.length === 0) return undefined;
  const name = entry.argv[0]!;
  if (!/^[\w@+:.,-]+$/.test(name) || name.includes('=')) return undefined;
  const prefix = entry.text.slice(0, entry.text.length - entry.argv.join(' ').length).trim();
  // A path-like command (`./x`, `/opt/x`) carries its raw form as an extra form: no pattern.
  if (entry.forms.length > (prefix ? 2 : 1)) return undefined;
  const env = prefix ? `(${escapeRegex(prefix).replace(/ /g, '\\s+')}\\s+)?` : '';
  const sub = entry.argv[1];
  if (sub !== undefined && !sub.startsWith('-') && /^[\w@+:.,-]+$/.test(sub)) {
    return `^${env}${escapeRegex(name)}\\s+${escapeRegex(sub)}(\\s|$)`;
  }
  return `^${env}${escapeRegex(name)}\\b`;
}

/** `^src/` for `src/a.ts`; undefined for root-level files and paths outside the workspace. */
export function pathPattern(relativePath: string): string | undefined {
  if (relativePath.startsWith('/') || relativePath.startsWith('..')) return undefined;
  const slash = relativePath.lastIndexOf('/');
  if (slash <= 0) return undefined;
  return `^${escapeRegex(relativePath.slice(0, slash))}/`;
}

/** The exact-input pattern used by tools without structure (spawn_agent, terminal_input). */
export function exactPattern(input: string): string | undefined {
  return input.length > 0 && input.length <= 200 ? `^${escapeRegex(input)}$` : undefined;
}
