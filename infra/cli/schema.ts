/**
 * @module
 * `skein schema`: JSON Schema (zod's toJSONSchema) of the envelopes, every
 * command with its reply, and every fact. docs/protocol.md is generated from
 * the same function (`npm run docs`).
 */
import { z } from 'zod';
import { COMMANDS, CommandEnvelope, ErrorReply, EVENTS, FactEnvelope } from '../../schemas/index.ts';

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

export async function printSchema(): Promise<void> {
  process.stdout.write(`${JSON.stringify(protocolSchema(), null, 2)}\n`);
}
