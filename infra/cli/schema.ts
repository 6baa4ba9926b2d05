/**
 * @module
 * `skein schema [type]`: JSON Schema (zod's toJSONSchema) of the envelopes,
 * every command with its reply, and every fact; with a type, only that
 * command's (or fact's). docs/protocol.md is generated from the same function
 * (`npm run docs`).
 */
import * as z from 'zod';
import { COMMANDS, CommandEnvelope, ErrorReply, EVENTS, FactEnvelope } from '../../schemas/index.ts';
import { UsageError } from './output.ts';

export function protocolSchema(): Record<string, unknown> {
  const json = (schema: z.ZodType, io: 'input' | 'output' = 'output') =>
    z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' });
  return {
    envelopes: { command: json(CommandEnvelope, 'input'), fact: json(FactEnvelope), errorReply: json(ErrorReply) },
    commands: Object.fromEntries(
      COMMANDS.map((c) => [
        c.type,
        {
          summary: c.summary,
          // The tool call as its CommandDef declares it: which tools, and whether the policy judges an input.
          ...(c.tool ? { tool: { tools: [...c.tool.tools], judged: c.tool.call !== undefined } } : {}),
          ...(c.reads ? { reads: true } : {}),
          data: json(c.data, 'input'),
          reply: json(c.reply),
        },
      ]),
    ),
    events: Object.fromEntries(
      EVENTS.map((e) => [
        e.type,
        { summary: e.summary, aggregate: e.aggregate, stream: e.stream ?? 'events', data: json(e.data) },
      ]),
    ),
  };
}

/**
 * The schema of one command and/or fact named `type` (a name can be both, e.g. none today, so both are kept
 * under their kind); an unknown type is a usage error listing the close matches.
 */
export function typeSchema(type: string): Record<string, unknown> {
  const all = protocolSchema() as { commands: Record<string, unknown>; events: Record<string, unknown> };
  const found: Record<string, unknown> = {};
  if (type in all.commands) found['command'] = { type, ...(all.commands[type] as object) };
  if (type in all.events) found['event'] = { type, ...(all.events[type] as object) };
  if (Object.keys(found).length > 0) return found;
  const near = closeMatches(type, [...Object.keys(all.commands), ...Object.keys(all.events)]);
  throw new UsageError(
    `unknown command or fact type '${type}'` +
      (near.length > 0 ? `; did you mean ${near.join(', ')}?` : '; run `skein schema` (no type) to list them all'),
  );
}

/** Names containing `wanted` (or contained in it), else within a small edit distance, best first, at most 8. */
export function closeMatches(wanted: string, names: string[]): string[] {
  const w = wanted.toLowerCase();
  const unique = [...new Set(names)];
  const scored = unique
    .map((name) => {
      const n = name.toLowerCase();
      const contains = n.includes(w) || (w.length >= 3 && w.includes(n));
      const tail = n.split('.').pop() ?? n;
      const distance = Math.min(editDistance(w, n), editDistance(w, tail));
      return { name, score: contains ? 0 : distance };
    })
    .filter((s) => s.score <= Math.max(2, Math.floor(w.length / 3)))
    .sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  return scored.slice(0, 8).map((s) => s.name);
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

export async function printSchema(type?: string): Promise<void> {
  const schema = type === undefined ? protocolSchema() : typeSchema(type);
  process.stdout.write(`${JSON.stringify(schema, null, 2)}\n`);
}
