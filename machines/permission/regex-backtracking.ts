/**
 * @module
 * Refuses policy patterns that JavaScript's backtracking regex engine can take super-linear time on.
 * Policy rules are written by an operator, but the text they are matched against is written by the
 * agent: one rule such as `\s+--force` (quadratic: 32,000 spaces held the event loop 1 s) or `(a+)+$`
 * (exponential: 30 characters, minutes) lets any agent stall the host for every agent. V8's linear
 * engine cannot run case-insensitive patterns, and a linear engine in JavaScript (re2js) costs 100×
 * per match on the exec path, so patterns are checked once, when compiled, by scslre (the ReDoS
 * analysis behind eslint-plugin-regexp), and a pattern it reports is treated like one that does not
 * compile: the tool denies, naming it, until the operator rewrites it. scslre sees only unbounded
 * repetition, so bounded ones are widened before it looks (`widened`), and what it cannot see at all is
 * bounded by count: chains of optional parts, and patterns too big to check quickly. Parents write their
 * children's policy layers too, so the check's own cost is bounded (one report; at most 64 repetitions).
 * Pure; results are memoized. */
import { type AST, RegExpParser, visitRegExpAST } from '@eslint-community/regexpp';
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

/** More repetitions than this in one pattern are refused unchecked (the check's cost grows with them). */
const MAX_QUANTIFIERS = 64;
/** More optional parts (`x?`) than this are refused: a chain of them backtracks 2^n times at every start. */
const MAX_OPTIONALS = 8;

function analyseRisk(source: string, flags: string): string | undefined {
  let parsed: ParsedLiteral;
  try {
    parsed = widened(source, flags);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return `could not be checked for catastrophic backtracking (${why}); rewrite it in plain regex syntax`;
  }
  if (parsed.quantifiers > MAX_QUANTIFIERS) {
    return (
      `has ${parsed.quantifiers} repetitions (*, +, ?, {n,m}), more than the ${MAX_QUANTIFIERS} that are checked ` +
      'for catastrophic backtracking; split it into several rules'
    );
  }
  if (parsed.optionals > MAX_OPTIONALS) {
    return (
      `has ${parsed.optionals} optional parts (x?), more than ${MAX_OPTIONALS}: a chain of them can backtrack ` +
      '2^n times at every start; split it into several rules or use alternatives'
    );
  }
  // One report is enough to refuse; listing them all took 16 s on a crafted 2 KB pattern.
  const report = analyse(parsed, { maxReports: 1 }).reports[0];
  if (!report) return undefined;
  const growth = report.exponential ? 'exponential' : 'polynomial';
  const run = JSON.stringify(report.character.pick.repeat(3));
  // scslre's rewrite is of the widened pattern, so it is offered only when nothing was widened.
  const fixed = parsed.widened === 0 ? report.fix() : undefined;
  const hint = fixed
    ? `an equivalent linear pattern is ${JSON.stringify(fixed.source)}`
    : 'anchor it with ^ or remove the overlap between neighbouring repetitions';
  return (
    `can take ${growth} time on a long run of ${run}… (an agent controls the text it is matched against, so it ` +
    `could stall the runtime); ${hint}`
  );
}

type ParsedLiteral = {
  pattern: AST.Pattern;
  flags: AST.Flags;
  quantifiers: number;
  optionals: number;
  widened: number;
};

/**
 * The pattern's syntax tree with every bounded repetition of more than one (`{2,1000}`, `{25}`) made
 * unbounded: scslre analyses only unbounded ones, yet `(?:a{0,100}){0,100}$` held V8 10 s on 26 letters,
 * and `[\s\S]{1,1000}[\s\S]{1,1000}x` is quadratic up to its bounds. Widening can only add reports.
 */
function widened(source: string, flags: string): ParsedLiteral {
  const parser = new RegExpParser({ ecmaVersion: 2025 });
  const pattern = parser.parsePattern(source, 0, source.length, {
    unicode: flags.includes('u'),
    unicodeSets: flags.includes('v'),
  });
  const out: ParsedLiteral = { pattern, flags: parser.parseFlags(flags), quantifiers: 0, optionals: 0, widened: 0 };
  visitRegExpAST(pattern, {
    onQuantifierEnter(q) {
      out.quantifiers++;
      if (q.min === 0 && q.max === 1) out.optionals++;
      if (q.max > 1 && q.max !== Number.POSITIVE_INFINITY) {
        q.max = Number.POSITIVE_INFINITY;
        out.widened++;
      }
    },
  });
  return out;
}
