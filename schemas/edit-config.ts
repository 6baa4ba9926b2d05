/**
 * @module
 * `domains.edit` in the runtime config: the file size cap and the limits on open streaming edits, with their
 * defaults (the edit tools' own code reads the defaults when no config is given).
 */
import * as z from 'zod';

/** The largest file the edit tools read or write unless `domains.edit.maxFileBytes` says otherwise: 8 MiB. */
export const DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024;

/** Streaming edits one agent may hold open unless `domains.edit.maxOpenPerAgent` says otherwise. */
export const DEFAULT_MAX_OPEN_EDITS = 8;

/** Streaming edits all agents of a host may hold open unless `domains.edit.maxOpenPerHost` says otherwise. */
export const DEFAULT_MAX_OPEN_EDITS_PER_HOST = 64;

/** `domains.edit` in the runtime config. */
export const EditConfig = z
  .object({
    maxFileBytes: z
      .number()
      .int()
      .min(1)
      .max(256 * 1024 * 1024, 'at most 256 MiB: an edit holds several copies of the file in memory')
      .default(DEFAULT_MAX_FILE_BYTES)
      .describe(
        'Largest file (bytes) the file and edit tools read, edit or write; larger ones are refused, naming this ' +
          'key. A single file.write is also bounded by limits.maxPayloadBytes (and the broker max_payload); ' +
          'streamed edits (edit.begin/input) are not.',
      ),
    maxOpenPerAgent: z
      .number()
      .int()
      .min(1)
      .max(1024)
      .default(DEFAULT_MAX_OPEN_EDITS)
      .describe(
        'Streaming edits (edit.begin not yet finished or cancelled) one agent may hold open; each holds its ' +
          'file in memory until it ends. More are refused, naming this key.',
      ),
    maxOpenPerHost: z
      .number()
      .int()
      .min(1)
      .max(65_536)
      .default(DEFAULT_MAX_OPEN_EDITS_PER_HOST)
      .describe(
        'Streaming edits all agents on this host may hold open together (domains.agents.maxAgents agents each ' +
          'within maxOpenPerAgent would otherwise hold thousands of files in memory). More are refused, naming ' +
          'this key.',
      ),
  })
  .strict();
export type EditConfig = z.infer<typeof EditConfig>;
