/**
 * @module
 * Turns off zod's JIT for the fast entry (client-main.ts imports this first, before any schema is built: each
 * object schema reads the setting when it is made). zod compiles a parser per object schema with
 * `new Function` on its first parse, which pays in a long-lived runtime but not in a process that parses a
 * handful of objects once; V8's code cache cannot keep such code either (issue 15). Same results, same messages.
 */
import * as z from 'zod';

z.config({ jitless: true });
