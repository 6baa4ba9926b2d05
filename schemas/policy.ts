/**
 * @module
 * The policy file: Zed-compatible `tool_permissions` (same keys, so rules
 * written for Zed carry over). A file is either the bare object or
 * `{ "tool_permissions": { ... } }` / `{ "agent": { "tool_permissions": ... } }`
 * (unwrapped by `PolicyFile`). Validation errors name the key (zod issue path).
 */
import * as z from 'zod';
import { TOOLS, ToolName } from './tool.ts';

export const PolicyMode = z.enum(['allow', 'deny', 'confirm']);
export type PolicyMode = z.infer<typeof PolicyMode>;

/** One rule: a regex, case-insensitive unless `case_sensitive` is true. Compiled later (bad regexes deny). */
export const PolicyRule = z.strictObject({
  pattern: z
    .string()
    .min(1, 'a rule pattern must not be empty')
    .max(4096, 'a rule pattern must be at most 4096 characters'),
  case_sensitive: z.boolean().optional(),
});
export type PolicyRule = z.infer<typeof PolicyRule>;

const RuleList = z.array(PolicyRule).max(10_000, 'at most 10000 rules per list');

const ToolPolicyRaw = z.strictObject({
  default: PolicyMode.optional(),
  default_mode: PolicyMode.optional(),
  always_allow: RuleList.optional(),
  always_deny: RuleList.optional(),
  always_confirm: RuleList.optional(),
});

/** A tool's rules; `default_mode` is accepted as an alias of `default`. */
export const ToolPolicy = ToolPolicyRaw.transform((t) => ({
  default: t.default ?? t.default_mode,
  always_allow: t.always_allow ?? [],
  always_deny: t.always_deny ?? [],
  always_confirm: t.always_confirm ?? [],
}));
export type ToolPolicy = z.output<typeof ToolPolicy>;

/**
 * Zed tool names skein does not gate: accepted (and validated) so a Zed
 * `tool_permissions` block loads unchanged, then ignored. Anything else is an
 * unknown tool and an error.
 */
export const ZED_ONLY_TOOLS = [
  'fetch',
  'web_search',
  'copy_path',
  'move_path',
  'delete_path',
  'create_directory',
  'list_directory',
  'find_path',
  'grep',
  'diagnostics',
  'now',
  'open',
  'thinking',
  'save_file',
  'restore_file_from_disk',
  'streaming_edit_file',
  'read_only',
] as const;
const isZedOnly = (key: string) => (ZED_ONLY_TOOLS as readonly string[]).includes(key) || key.startsWith('mcp:');

const PolicyRaw = z.strictObject({
  default: PolicyMode.optional(),
  default_mode: PolicyMode.optional(),
  tools: z
    .record(z.string(), z.unknown())
    .optional()
    .superRefine((tools, ctx) => {
      for (const [key, value] of Object.entries(tools ?? {})) {
        if (isZedOnly(key)) {
          const r = ToolPolicyRaw.safeParse(value);
          for (const issue of r.error?.issues ?? [])
            ctx.addIssue({
              code: 'custom',
              path: [key, ...issue.path.map((p) => p as string | number)],
              message: issue.message,
            });
          continue;
        }
        if (!(TOOLS as readonly string[]).includes(key)) {
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: `unknown tool '${key}'; use one of ${TOOLS.join(', ')}`,
          });
        }
      }
    })
    .transform((tools) => (tools ? Object.fromEntries(Object.entries(tools).filter(([k]) => !isZedOnly(k))) : tools))
    .pipe(z.partialRecord(ToolName, ToolPolicy).optional()),
});

/** One policy layer (global file, project file, or an agent's spawn policy), normalized. */
export const Policy = PolicyRaw.transform((p) => ({
  default: p.default ?? p.default_mode,
  tools: (p.tools ?? {}) as Partial<Record<ToolName, ToolPolicy>>,
}));
export type Policy = z.output<typeof Policy>;
/** The JSON a user writes (before normalization). */
export type PolicyInput = z.input<typeof Policy>;

/** A policy file on disk: the policy itself, or wrapped as Zed settings are. */
export const PolicyFile = z.preprocess((raw) => {
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    const r = raw as Record<string, unknown>;
    if (r.agent && typeof r.agent === 'object' && 'tool_permissions' in (r.agent as object)) {
      return (r.agent as Record<string, unknown>).tool_permissions;
    }
    if ('tool_permissions' in r) return r.tool_permissions;
  }
  return raw;
}, Policy);

/** The layers, in merge order. `builtin` is not a file: it is the code in machines/permission/permission-builtin.ts. */
export const PolicyLayerName = z.enum(['global', 'project', 'agent']);
export type PolicyLayerName = z.infer<typeof PolicyLayerName>;

/** Formats a zod error as `key.path: message; ...` for messages that name the key. */
export function formatPolicyIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? i.path.map(String).join('.') : '(root)'}: ${i.message}`).join('; ');
}
