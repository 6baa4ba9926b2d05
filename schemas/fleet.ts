/**
 * @module
 * A fleet plan: sub-agents under one root, each with a label, an optional
 * policy and a scripted task (tool calls run in order by skein's built-in
 * deterministic driver). `skein fleet run <plan.json|yaml>`.
 */
import * as z from 'zod';
import { AgentId } from './ids.ts';

const Path = z.string().min(1).describe('Path, relative to the agent workspace or absolute inside it.');

/** The kinds of step a plan may use: one key each (`- exec: npm test`). Named in errors about a bad step. */
export const FLEET_STEP_KINDS = ['exec', 'write', 'edit', 'read', 'spawn'] as const;

export const FleetStep: z.ZodType<FleetStep> = z.lazy(() =>
  z.union([
    z
      .object({
        exec: z.string().min(1),
        timeoutMs: z.number().int().min(1).optional(),
        expectExit: z
          .number()
          .int()
          .optional()
          .describe('The exit code the step expects (default 0): any other fails the step and its agent.'),
      })
      .strict(),
    z.object({ write: z.object({ path: Path, content: z.string() }).strict() }).strict(),
    z
      .object({
        edit: z
          .object({
            path: Path,
            edits: z.array(z.object({ oldText: z.string(), newText: z.string() }).strict()).min(1),
          })
          .strict(),
      })
      .strict(),
    z.object({ read: z.object({ path: Path }).strict() }).strict(),
    z.object({ spawn: FleetAgent }).strict(),
  ]),
);
export type FleetStep =
  | { exec: string; timeoutMs?: number | undefined; expectExit?: number | undefined }
  | { write: { path: string; content: string } }
  | { edit: { path: string; edits: Array<{ oldText: string; newText: string }> } }
  | { read: { path: string } }
  | { spawn: FleetAgent };

export const FleetAgent: z.ZodType<FleetAgent> = z.lazy(() =>
  z
    .object({
      label: z.string().min(1).max(200),
      agentId: AgentId.optional(),
      policy: z.unknown().optional(),
      workspace: z.string().min(1).optional(),
      steps: z.array(FleetStep).default([]),
    })
    .strict(),
);
export type FleetAgent = {
  label: string;
  agentId?: string | undefined;
  policy?: unknown;
  workspace?: string | undefined;
  steps: FleetStep[];
};

export const FleetAnswer = z
  .object({
    match: z.string().min(1).describe('Regex on the requested tool input (command line or path).'),
    decision: z.enum(['allow_once', 'allow_always', 'deny_once', 'deny_always']),
  })
  .strict();

export const FleetPlan = z
  .object({
    agents: z.array(FleetAgent).min(1, 'a plan needs at least one agent'),
    /** How the root answers sub-agents' permission requests (first match wins; unmatched requests wait for a human). */
    answers: z.array(FleetAnswer).default([]),
    review: z
      .object({
        accept: z.array(Path).optional().describe('Paths to accept after the run (relative to the root workspace).'),
        reject: z.array(Path).optional().describe('Paths to reject after the run.'),
      })
      .strict()
      .optional(),
  })
  .strict();
export type FleetPlan = z.infer<typeof FleetPlan>;
