/**
 * @module
 * The acceptance, run over each transport: tools listed with schemas
 * and annotations; `echo hi` comes back in structuredContent; a fuzzy edit
 * lands and says it was fuzzy; a confirm-level command asks by elicitation,
 * runs after "allow once", and a denial is a tool error while the canary
 * file it would have created never appears.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { TestClient } from '../../support/mcp.ts';

export const EXPECTED_TOOLS = [
  'edit_file',
  'read_file',
  'review_accept',
  'review_list',
  'review_reject',
  'spawn_agent',
  'terminal_close',
  'terminal_exec',
  'terminal_open',
  'terminal_read',
  'terminal_screen',
  'terminal_signal',
  'terminal_write',
  'wait_agent',
  'write_file',
];

type Text = { type: string; text: string };
const text = (r: unknown) => ((r as { content: Text[] }).content ?? []).map((c) => c.text).join('\n');

export function acceptance(get: () => { c: TestClient; dir: string }): void {
  it('lists every tool with input and output schemas and annotations', async () => {
    const { tools } = await get().c.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(EXPECTED_TOOLS);
    for (const tool of tools) {
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(typeof tool.annotations?.readOnlyHint, tool.name).toBe('boolean');
      expect(tool.description!.length, tool.name).toBeLessThan(400);
    }
    // Every tool says it takes no other arguments: a client that checks its calls learns a misspelt one before.
    for (const tool of tools) expect(tool.inputSchema['additionalProperties'], tool.name).toBe(false);
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('read_file')!.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.get('terminal_exec')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });

  it('runs echo hi in a terminal and returns hi in structuredContent', async () => {
    const r = await get().c.client.callTool({ name: 'terminal_exec', arguments: { command: 'echo hi' } });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ status: 'exited', exitCode: 0 });
    expect((r.structuredContent as { output: string }).output.trim()).toBe('hi');
  });

  it('refuses an argument the tool does not take, naming it, and runs nothing', async () => {
    // A model used to other tools sends `timeout` (seconds) or `old_string`: ignored, the command ran with the
    // default timeout and the edit failed on its missing oldText only.
    const { c, dir } = get();
    const exec = await c.client.callTool({
      name: 'terminal_exec',
      arguments: { command: 'touch canary-stray.txt', timeout: 5 },
    });
    expect(exec.isError).toBe(true);
    expect(text(exec)).toMatch(/Unrecognized key.*"timeout"/);
    const edit = await c.client.callTool({
      name: 'edit_file',
      arguments: { path: 'greet.py', edits: [{ old_string: 'a', new_string: 'b' }] },
    });
    expect(edit.isError).toBe(true);
    expect(text(edit)).toMatch(/Unrecognized keys?.*"old_string"/);
    expect(existsSync(join(dir, 'canary-stray.txt'))).toBe(false);
  });

  it('makes a fuzzy edit that lands and says it matched fuzzily', async () => {
    const { c, dir } = get();
    writeFileSync(join(dir, 'greet.py'), 'def greet(name):\n    return "hello " + name\n');
    // The model's old text has drifted (spacing, no indentation): an exact replace would fail, the fuzzy one
    // lands, and the new text is reindented to the file's indentation.
    const r = await c.client.callTool({
      name: 'edit_file',
      arguments: {
        path: 'greet.py',
        edits: [
          {
            oldText: 'def greet(name) :\nreturn  "hello "  +  name',
            newText: 'def greet(name):\nreturn f"hello, {name}!"',
          },
        ],
      },
    });
    expect(r.isError, text(r)).toBeFalsy();
    const reply = r.structuredContent as { edits: Array<{ matchKind: string }>; diff: string };
    expect(reply.edits).toHaveLength(1);
    expect(reply.edits[0]!.matchKind).toBe('fuzzy');
    expect(text(r)).toContain(`edit 1: ${reply.edits[0]!.matchKind} match`);
    expect(readFileSync(join(dir, 'greet.py'), 'utf8')).toBe('def greet(name):\n    return f"hello, {name}!"\n');
  });

  it('asks by elicitation for a confirm-level command and runs it after "allow once"', async () => {
    const { c, dir } = get();
    c.answer.next = 'allow_once';
    const before = c.elicited.length;
    const r = await c.client.callTool(
      { name: 'terminal_exec', arguments: { command: 'touch allowed.txt && echo made' } },
      undefined,
      { timeout: 120_000 },
    );
    expect(r.isError, text(r)).toBeFalsy();
    expect((r.structuredContent as { output: string }).output).toContain('made');
    expect(existsSync(join(dir, 'allowed.txt'))).toBe(true);
    const shown = c.elicited.slice(before);
    expect(shown).toHaveLength(1);
    // The exact command, and the three answers.
    expect(shown[0]!.message).toContain('touch allowed.txt && echo made');
    expect(JSON.stringify(shown[0]!.schema)).toMatch(/allow_once.*allow_always.*deny_once/);
  });

  it('returns a denial as a tool error, and the denied command never runs', async () => {
    const { c, dir } = get();
    c.answer.next = 'decline';
    const r = await c.client.callTool(
      { name: 'terminal_exec', arguments: { command: 'touch canary-denied.txt' } },
      undefined,
      { timeout: 120_000 },
    );
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/permission denied/);
    expect(existsSync(join(dir, 'canary-denied.txt'))).toBe(false);
    c.answer.next = 'allow_once';
  });

  it('refuses a hard-denied command without asking', async () => {
    const { c, dir } = get();
    writeFileSync(join(dir, 'keep.txt'), 'canary');
    const before = c.elicited.length;
    const r = await c.client.callTool({ name: 'terminal_exec', arguments: { command: 'rm keep.txt' } });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/permission denied/);
    expect(c.elicited.length).toBe(before);
    expect(readFileSync(join(dir, 'keep.txt'), 'utf8')).toBe('canary');
  });
}
