/**
 * @module
 * `skein edit apply <file> --edits <file.json|->` and `skein edit write
 * <file> --content <file|->`: the edit kernel without a runtime. Prints the
 * unified diff (or the error); exit 0 applied, 1 not applied (also when only
 * some edits applied), 2 bad usage.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { EditService } from '../../actors/edit/edit-service.ts';
import { unifiedDiff } from '../../actors/edit/edit-report.ts';
import { readTextFile } from '../../actors/edit/file-io.ts';
import { applyEdits } from '../../machines/edit/edit-apply.ts';
import { decodeInput, ToolInputError } from '../../machines/edit/edit-parser.ts';
import { RuntimeError, toErrorInfo } from '../../schemas/errors.ts';

/** Where the commands read and write; tests pass their own. */
export type EditCliIo = {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readStdin: () => Promise<string>;
  exit: (code: number) => void;
};

const defaultIo: EditCliIo = {
  stdout: (t) => void process.stdout.write(t),
  stderr: (t) => void process.stderr.write(t),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
  exit: (code) => {
    process.exitCode = code;
  },
};

class UsageError extends Error {}

/** What `--edits` holds, said after every error about its shape. */
const EDITS_SHAPE = 'Expected [{ "oldText": "...", "newText": "..." }, ...] (or { "edits": [...] }).';

/**
 * Refuses a top-level value that is not a list of edits, before the kernel reads a missing `edits` as none at
 * all ("The edits array is empty" for one edit object not wrapped in an array).
 */
function checkEditsShape(value: unknown, source: string): void {
  if (Array.isArray(value)) return;
  const where = `The edits in ${JSON.stringify(source)}`;
  if (typeof value !== 'object' || value === null) {
    throw new UsageError(`${where} are ${value === null ? 'null' : `a ${typeof value}`}, not an array. ${EDITS_SHAPE}`);
  }
  if ('edits' in value) return;
  const keys = Object.keys(value);
  const oneEdit = ['oldText', 'newText', 'old_text', 'new_text'].some((k) => keys.includes(k));
  throw new UsageError(
    oneEdit
      ? `${where} are one edit object, not an array: wrap it in [ ]. ${EDITS_SHAPE}`
      : `${where} are an object without "edits" (keys: ${keys.slice(0, 5).join(', ') || 'none'}). ${EDITS_SHAPE}`,
  );
}

export function registerEditCommands(program: Command, io: EditCliIo = defaultIo): void {
  const edit = program
    .command('edit')
    .description('Apply fuzzy edits or write files with the skein edit kernel (no runtime needed)');
  edit
    .command('apply')
    .description('Apply [{ "oldText", "newText" }] edits (or { "edits": [...] }) to a file')
    .argument('<file>', 'the file to edit')
    .option('--edits <path>', 'JSON file with the edits, or - for stdin')
    .option('--dry-run', 'print the diff without writing')
    .option('--json', 'print a JSON result')
    .action(async (file: string, opts: { edits?: string; dryRun?: boolean; json?: boolean }) => {
      await run(io, opts.json ?? false, async () => {
        if (!opts.edits)
          throw new UsageError(
            'Missing --edits <file.json|->. Give the edits as a JSON file, or - to read them from stdin.',
          );
        const text = opts.edits === '-' ? await io.readStdin() : readArg(opts.edits, '--edits');
        let parsed: ReturnType<typeof decodeInput>;
        try {
          const value: unknown = JSON.parse(text);
          checkEditsShape(value, opts.edits);
          parsed = decodeInput(Array.isArray(value) ? { edits: value } : value, 0);
        } catch (err) {
          if (err instanceof SyntaxError)
            throw new UsageError(
              `The edits in ${JSON.stringify(opts.edits)} are not valid JSON (${err.message}). ${EDITS_SHAPE}`,
            );
          if (err instanceof ToolInputError) {
            // The kernel names the tool's snake_case keys; the CLI documents camelCase (both are accepted).
            const message = err.message.replaceAll('"old_text"', '"oldText"').replaceAll('"new_text"', '"newText"');
            throw new UsageError(`${message} ${EDITS_SHAPE}`);
          }
          throw err;
        }
        const edits = parsed.edits ?? [];
        if (opts.dryRun) return dryRun(file, edits);
        return service(file).edit(cliCtx, { path: resolve(file), edits });
      });
    });
  edit
    .command('write')
    .description('Create or overwrite a file atomically, keeping its line endings, BOM and mode')
    .argument('<file>', 'the file to write')
    .option('--content <path>', 'file with the new content, or - for stdin')
    .option('--json', 'print a JSON result')
    .action(async (file: string, opts: { content?: string; json?: boolean }) => {
      await run(io, opts.json ?? false, async () => {
        if (opts.content === undefined)
          throw new UsageError(
            'Missing --content <file|->. Give the new content as a file, or - to read it from stdin.',
          );
        const content = opts.content === '-' ? await io.readStdin() : readArg(opts.content, '--content');
        return service(file).write(cliCtx, { path: resolve(file), content });
      });
    });
}

const cliCtx = { agentId: 'cli', emit: async () => {} };

/** The kernel with the whole filesystem as workspace: the CLI user chose the file. */
function service(_file: string): EditService {
  return new EditService({ workspaceRoots: () => ['/'] });
}

async function dryRun(file: string, edits: Array<{ oldText: string; newText: string }>) {
  const f = await readTextFile(['/'], resolve(file), 8 * 1024 * 1024, file);
  const r = applyEdits(f.text, edits);
  const report = unifiedDiff(file, f.text, r.content);
  if (r.failure) {
    throw new RuntimeError(
      'not_applied',
      `${r.failure.message}${report.diff ? `\nWould apply before it:\n${report.diff}` : '\nNo edits would be made.'}`,
    );
  }
  return {
    dryRun: true,
    path: file,
    ...report,
    edits: r.outcomes.map(({ inserted: _i, range: _r, ...o }) => o),
    message: `Would edit ${file}`,
  };
}

function readArg(path: string, flag: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    throw new UsageError(`Cannot read ${flag} file ${JSON.stringify(path)}. Give an existing file, or - for stdin.`);
  }
}

async function run(
  io: EditCliIo,
  json: boolean,
  body: () => Promise<{ diff: string; message: string } & Record<string, unknown>>,
): Promise<void> {
  try {
    const reply = await body();
    if (json) io.stdout(`${JSON.stringify({ ok: true, ...reply })}\n`);
    else io.stdout(reply.diff === '' ? `${reply.message} (no changes)\n` : reply.diff);
    io.exit(0);
  } catch (err) {
    const usage = err instanceof UsageError;
    const info = usage ? { code: 'usage', message: (err as Error).message, retryable: false } : toErrorInfo(err);
    if (json) io.stdout(`${JSON.stringify({ ok: false, error: info })}\n`);
    else io.stderr(`${info.message}\n`);
    io.exit(usage ? 2 : 1);
  }
}
