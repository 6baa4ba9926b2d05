/**
 * @module
 * Refuses policy patterns that JavaScript's backtracking regex engine can take super-linear time on.
 * Policy rules are written by an operator, but the text they are matched against is written by the
 * agent: one rule such as `\s+--force` (quadratic: 32,000 spaces held the event loop 1 s) or `(a+)+$`
 * (exponential: 30 characters, minutes) lets any agent stall the host for every agent. V8's linear
 * engine cannot run case-insensitive patterns, and a linear engine in JavaScript (re2js) costs 100×
 * per match on the exec path, so patterns are checked once, when compiled, by scslre (the ReDoS
 * analysis behind eslint-plugin-regexp), and a pattern it reports is treated like one that does not
 * compile: the tool denies, naming it, until the operator rewrites it. Pure; results are memoized.
 */
import { analyse } from 'scslre';

const MEMO_LIMIT = 4096;
const memo = new Map<string, string | undefined>();

/**
 * `source` compiled with `flags`, or why it cannot be used against text an agent wrote: the syntax error,
 * or the input that makes it backtrack super-linearly.
 */
export function compileGuardedRegex(source: string, flags: string): RegExp | string {
  let regex: RegExp;
  try {
    regex = new RegExp(source, flags);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  return backtrackingRisk(source, flags) ?? regex;
}

/**
 * Why `source` (with `flags`) can backtrack super-linearly, as a sentence for the operator that says
 * what input triggers it and how to rewrite it, or undefined when it runs in linear time.
 */
export function backtrackingRisk(source: string, flags: string): string | undefined {
  const key = `${flags}/${source}`;
  if (memo.has(key)) return memo.get(key);
  const risk = analyseRisk(source, flags);
  if (memo.size >= MEMO_LIMIT) memo.delete(memo.keys().next().value as string);
  memo.set(key, risk);
  return risk;
}

function analyseRisk(source: string, flags: string): string | undefined {
  let reports: ReturnType<typeof analyse>['reports'];
  try {
    reports = analyse({ source, flags }).reports;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return `could not be checked for catastrophic backtracking (${why}); rewrite it in plain regex syntax`;
  }
  // The worst one: an exponential report may come after a polynomial one.
  const report = reports.find((r) => r.exponential) ?? reports[0];
  if (!report) return undefined;
  const growth = report.exponential ? 'exponential' : 'polynomial';
  const run = JSON.stringify(report.character.pick.repeat(3));
  const fixed = report.fix();
  const hint = fixed
    ? `an equivalent linear pattern is ${JSON.stringify(fixed.source)}`
    : 'anchor it with ^ or remove the overlap between neighbouring quantifiers';
  return (
    `can take ${growth} time on a long run of ${run}… (an agent controls the text it is matched against, so it ` +
    `could stall the runtime); ${hint}`
  );
}
