/**
 * @module
 * Loads tree-sitter grammars (web-tree-sitter 0.27 + @vscode/tree-sitter-wasm)
 * once per process and hands out parsers. The wasm heap is not garbage
 * collected: whoever parses must `tree.delete()`; `withTree` does it for you.
 */
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { Language, Parser, type Tree } from 'web-tree-sitter';

const require = createRequire(import.meta.url);

/** Grammars shipped by @vscode/tree-sitter-wasm 0.3.1, by skein's language name. */
export const GRAMMARS = {
  bash: 'tree-sitter-bash.wasm',
  typescript: 'tree-sitter-typescript.wasm',
  tsx: 'tree-sitter-tsx.wasm',
  javascript: 'tree-sitter-javascript.wasm',
  python: 'tree-sitter-python.wasm',
  go: 'tree-sitter-go.wasm',
  rust: 'tree-sitter-rust.wasm',
  java: 'tree-sitter-java.wasm',
  csharp: 'tree-sitter-c-sharp.wasm',
  cpp: 'tree-sitter-cpp.wasm',
  css: 'tree-sitter-css.wasm',
  php: 'tree-sitter-php.wasm',
  ruby: 'tree-sitter-ruby.wasm',
} as const;
export type GrammarName = keyof typeof GRAMMARS;

/** File extension → grammar. */
export const EXTENSION_GRAMMAR: Record<string, GrammarName> = {
  '.ts': 'typescript',
  '.mts': 'typescript',
  '.cts': 'typescript',
  '.tsx': 'tsx',
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.jsx': 'javascript',
  '.py': 'python',
  '.pyi': 'python',
  '.sh': 'bash',
  '.bash': 'bash',
  '.go': 'go',
  '.rs': 'rust',
  '.java': 'java',
  '.cs': 'csharp',
  '.cc': 'cpp',
  '.cpp': 'cpp',
  '.cxx': 'cpp',
  '.hpp': 'cpp',
  '.hh': 'cpp',
  '.h': 'cpp',
  '.c': 'cpp',
  '.css': 'css',
  '.php': 'php',
  '.rb': 'ruby',
};

let initialized: Promise<void> | undefined;
const languages = new Map<GrammarName, Promise<Language>>();
const parsers = new Map<GrammarName, Parser>();

/**
 * Grammars run on Liftoff, V8's baseline wasm compiler, and are not tiered up to TurboFan (`--no-wasm-tier-up
 * --no-wasm-dynamic-tiering`: process-wide V8 flags, set before the first wasm is compiled; both are needed, and
 * not `--liftoff-only`, which V8 marks "for testing" and which leaves no compiler for a function Liftoff bails
 * out of). With tier-up, the first few hundred shell parses of the gate
 * made V8 compile 57 functions of the bash grammar in the background, one of them (27 KB of wasm) for 0.6 s:
 * ~1.4 s of CPU and ~40 MiB of compiler memory that glibc kept, in every runtime's first minutes (issue 15: it
 * landed in the middle of the output flood bench). A warm parse costs the same either way (~0.5 ms, mostly JS);
 * a 250 KB JavaScript syntax check 56-82 ms with TurboFan, 75-83 ms without, under load.
 */
function baselineWasmOnly(): void {
  setFlagsFromString('--no-wasm-tier-up --no-wasm-dynamic-tiering');
}

/** Loads (once) the grammar called `name`. */
export function loadLanguage(name: GrammarName): Promise<Language> {
  if (!initialized) {
    baselineWasmOnly();
    initialized = Parser.init();
  }
  let language = languages.get(name);
  if (!language) {
    const path = require.resolve(`@vscode/tree-sitter-wasm/wasm/${GRAMMARS[name]}`);
    language = initialized.then(() => Language.load(path));
    languages.set(name, language);
  }
  return language;
}

/**
 * A parser for `name`, cached per grammar. Parsing is synchronous, so one
 * parser per grammar is safe in a single-threaded process.
 */
export async function parserFor(name: GrammarName): Promise<Parser> {
  let parser = parsers.get(name);
  if (!parser) {
    const language = await loadLanguage(name);
    parser = new Parser();
    parser.setLanguage(language);
    parsers.set(name, parser);
  }
  return parser;
}

/** A parse given up at its deadline (`withTree`'s `maxMs`). */
export class ParseTimeoutError extends Error {
  constructor(grammar: string, maxMs: number, bytes: number) {
    super(`tree-sitter gave up parsing ${bytes} characters of ${grammar} after ${maxMs} ms`);
    this.name = 'ParseTimeoutError';
  }
}

/**
 * Parses `source` and runs `use` on the tree, deleting the tree afterwards. `maxMs`: the parse is given up past
 * it (`ParseTimeoutError`): parsing is synchronous, and a few megabytes of nested brackets held the host's event
 * loop for seconds.
 */
export async function withTree<T>(
  name: GrammarName,
  source: string,
  use: (tree: Tree) => T,
  options: { maxMs?: number } = {},
): Promise<T> {
  const parser = await parserFor(name);
  const { maxMs } = options;
  const deadline = maxMs === undefined ? undefined : performance.now() + maxMs;
  // Returning true from the callback cancels the parse.
  const progressCallback = deadline === undefined ? undefined : () => performance.now() > deadline;
  const tree = progressCallback
    ? parser.parse(source, null, { progressCallback: progressCallback as () => void })
    : parser.parse(source);
  if (!tree && maxMs !== undefined) {
    // A cancelled parse is resumed by the next one unless the parser is reset.
    parser.reset();
    throw new ParseTimeoutError(name, maxMs, source.length);
  }
  if (!tree) throw new Error(`tree-sitter could not parse the ${name} source`);
  try {
    return use(tree);
  } finally {
    tree.delete();
  }
}

/** The synchronous variant, for callers that already awaited `parserFor(name)`. */
export function withTreeSync<T>(parser: Parser, source: string, use: (tree: Tree) => T): T {
  const tree = parser.parse(source);
  if (!tree) throw new Error('tree-sitter could not parse the source');
  try {
    return use(tree);
  } finally {
    tree.delete();
  }
}
