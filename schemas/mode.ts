/**
 * @module
 * How a runtime reaches its agents: `embedded` (in-process bus, JSONL log,
 * Unix socket for clients), `private` (a nats-server it starts itself) or
 * `networked` (an existing NATS). Config may also say `auto`: pick one at start.
 */
import * as z from 'zod';

export const RUNTIME_MODES = ['embedded', 'private', 'networked'] as const;
export const RuntimeMode = z.enum(RUNTIME_MODES);
export type RuntimeMode = z.infer<typeof RuntimeMode>;

/** What the config accepts: a mode, or `auto`. */
export const MODES = ['auto', ...RUNTIME_MODES] as const;
