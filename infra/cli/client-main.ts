/**
 * @module
 * The fast entry: `skein call` and the other commands that only talk to a runtime (client-commands.ts).
 * skein.mjs runs it instead of main.ts when argv names one of them, so such a command loads commander and
 * its own module, not the definitions of `up`, `mcp` or the standalone tools. Its bundle (dist/cli-client)
 * carries every package it uses inlined and tree-shaken (loading them from node_modules file by file was most
 * of `skein call`'s start-up, issue 15), as one CommonJS file that client-start.mjs runs with V8's code cache.
 */
// First: before any module builds a schema.
import './zod-jitless.ts';
import { registerClientCommands } from './client-commands.ts';
import { newProgram, runProgram } from './program.ts';

const program = newProgram();
registerClientCommands(program);
/** Settles when the command has run (CommonJS has no top-level await); the code cache is written after. */
export const done: Promise<void> = runProgram(program);
