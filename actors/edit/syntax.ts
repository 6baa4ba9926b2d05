/**
 * @module
 * tree-sitter effects for the edit kernel: the syntax errors a change
 * introduced (`{ before, after, introduced }`) and an outline of a file's
 * symbols with line ranges (for reading large files). Uses the shared loader
 * in `tree-sitter.ts`; every tree is deleted by `withTree`.
 */
import { extname } from 'node:path';
import type { Node } from 'web-tree-sitter';
import type { OutlineSymbol, SyntaxReport } from '../../schemas/edit.ts';
import { EXTENSION_GRAMMAR, type GrammarName, withTree } from '../common/tree-sitter.ts';

export type SyntaxIssue = { line: number; column: number; kind: string; key: string };

/** The grammar for a path by extension, if one is shipped. */
export function grammarFor(path: string): GrammarName | undefined {
  return EXTENSION_GRAMMAR[extname(path).toLowerCase()];
}

/** Error and missing nodes of `source` (1-based line/column). */
export async function syntaxIssues(grammar: GrammarName, source: string): Promise<SyntaxIssue[]> {
  return withTree(grammar, source, (tree) => {
    const out: SyntaxIssue[] = [];
    const lines = source.split('\n');
    const visit = (node: Node) => {
      if (out.length >= 200) return;
      if (node.isError || node.isMissing) {
        const row = node.startPosition.row;
        const kind = node.isMissing ? `missing ${node.type}` : 'error';
        // Keyed by kind and the text of its line, so an unchanged error that only moved is not "introduced".
        out.push({
          line: row + 1,
          column: node.startPosition.column + 1,
          kind,
          key: `${kind}\u0000${(lines[row] ?? '').trim()}`,
        });
        if (node.isMissing) return;
      }
      for (const child of node.children) if (child && (child.hasError || child.isMissing)) visit(child);
    };
    if (tree.rootNode.hasError) visit(tree.rootNode);
    return out;
  });
}

/** Above this many characters (before + after), a change is not syntax-checked (see `checkSyntax`). */
export const SYNTAX_CHECK_MAX_CHARS = 256 * 1024;

/** Compares syntax before and after a change; undefined when no grammar fits the path or it is too big. */
export async function checkSyntax(
  path: string,
  before: string | undefined,
  after: string,
): Promise<SyntaxReport | undefined> {
  const grammar = grammarFor(path);
  if (!grammar) return undefined;
  // tree-sitter parses on the event loop at ~5 MB/s: past the cut-off the check would stall every other
  // command (a 50k-line file took ~0.4 s per parse), so big files get no syntax report.
  if (after.length + (before?.length ?? 0) > SYNTAX_CHECK_MAX_CHARS) return undefined;
  const prior = before === undefined ? [] : await syntaxIssues(grammar, before);
  const now = await syntaxIssues(grammar, after);
  const seen = new Map<string, number>();
  for (const i of prior) seen.set(i.key, (seen.get(i.key) ?? 0) + 1);
  const introduced = [];
  for (const i of now) {
    const n = seen.get(i.key) ?? 0;
    if (n > 0) seen.set(i.key, n - 1);
    else introduced.push({ line: i.line, column: i.column, kind: i.kind });
  }
  return { before: prior.length, after: now.length, introduced, language: grammar };
}

const SYMBOL_TYPES =
  /(declaration|definition|_item|_signature|^method|^class|^function|^interface|^enum|^module|^impl)/;
const SKIP_TYPES = new RegExp(
  '^(lexical_declaration|variable_declaration|expression_statement|import|export_statement|comment|' +
    'field_declaration_list|declaration_list|class_body|statement_block|block)$',
);

/**
 * Longest an outline's parse may hold the host (tree-sitter parses synchronously): ~1 MB of ordinary code here.
 * Past it the read has no outline and returns its first lines (`readRange`). A few megabytes of nested
 * brackets took 5.6 s.
 */
export const OUTLINE_PARSE_MS = 400;

/**
 * Named symbols (functions, classes, methods, types …) up to `maxDepth` levels deep; rejects with
 * `ParseTimeoutError` past `OUTLINE_PARSE_MS`.
 */
export async function outline(
  path: string,
  source: string,
  maxDepth = 2,
  limit = 1000,
): Promise<OutlineSymbol[] | undefined> {
  const grammar = grammarFor(path);
  if (!grammar) return undefined;
  return withTree(
    grammar,
    source,
    (tree) => {
      const out: OutlineSymbol[] = [];
      let budget = 50_000; // nodes visited: bounds the time spent on huge generated files
      const visit = (node: Node, depth: number) => {
        for (const child of node.namedChildren) {
          if (!child || out.length >= limit || --budget <= 0) return;
          let nextDepth = depth;
          const name = child.childForFieldName('name');
          if (name && SYMBOL_TYPES.test(child.type) && !SKIP_TYPES.test(child.type)) {
            out.push({
              kind: child.type,
              name: name.text,
              startLine: child.startPosition.row + 1,
              endLine: child.endPosition.row + 1,
              depth,
            });
            nextDepth = depth + 1;
            // Function bodies rarely hold symbols worth listing; skipping them keeps this linear in the top levels.
            if (/function|method|arrow/.test(child.type)) continue;
          } else if (child.type === 'lexical_declaration' && depth === 0) {
            for (const d of child.namedChildren) {
              const n = d?.childForFieldName('name');
              if (d && n)
                out.push({
                  kind: 'variable',
                  name: n.text,
                  startLine: child.startPosition.row + 1,
                  endLine: child.endPosition.row + 1,
                  depth,
                });
            }
            continue;
          }
          if (nextDepth <= maxDepth && child.namedChildCount > 0) visit(child, nextDepth);
        }
      };
      visit(tree.rootNode, 0);
      return out;
    },
    { maxMs: OUTLINE_PARSE_MS },
  );
}
