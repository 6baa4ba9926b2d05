/**
 * @module
 * The commands that only talk to a running runtime (`skein call`, `status`, `agents`, review and approvals):
 * defined once here, registered by main.ts among the others and by client-main.ts alone (the fast entry
 * skein.mjs picks for them, `CLIENT_COMMANDS` there). Each action imports its module when run.
 */
import type { Command } from 'commander';
import { agentOpt, data, json, nats } from './program.ts';

/** Each registers one command (or a pair that share a definition), in the order `skein --help` lists them. */
export const clientCommands = {
  call(program: Command): void {
    program
      .command('call')
      .description('Send one command and print the reply (the `nats req` of skein).')
      .argument('<type>', 'command type, e.g. agent.spawn')
      .argument('[json]', 'the command data as JSON, e.g. \'{"label":"a"}\'; - reads it from stdin (large data)', '{}')
      .option('--agent <id>', 'agent whose subject to send on (default: the root agent)')
      .option('--id <commandId>', 'command id (repeat it to retry idempotently)')
      .option('--timeout <ms>', 'reply timeout in ms', '30000')
      .addOption(nats())
      .addOption(data())
      .action(async (type, json, opts) => (await import('./call.ts')).callCommand(type, json, opts));
  },

  tail(program: Command): void {
    program
      .command('tail')
      .description('Print live facts, one readable line each (output summarized).')
      .argument('[pattern]', 'subject pattern under skein.evt. or skein.out., e.g. skein.evt.main.> (default: both)')
      .option('--json', 'print raw envelopes as JSON lines')
      .addOption(nats())
      .addOption(data())
      .action(async (pattern, opts) => (await import('./tail.ts')).tail(pattern, opts));
  },

  status(program: Command): void {
    program
      .command('status')
      .description('Live runtime status and state digest.')
      .option('--digest', 'print only the digest')
      .option('--json', 'print JSON')
      .addOption(nats())
      .addOption(data())
      .action(async (opts) => (await import('./status.ts')).status(opts));
  },

  agents(program: Command): void {
    program
      .command('agents')
      .description('List agents with their states (from the root, or --agent).')
      .option('--tree', 'indent by depth')
      .addOption(agentOpt())
      .addOption(json())
      .addOption(nats())
      .addOption(data())
      .action(async (opts) => (await import('./agents.ts')).agents(opts));

    program
      .command('cancel')
      .description('Cancel an agent and its whole subtree (terminals closed, requests denied, edits cancelled).')
      .argument('<agentId>')
      .option('--reason <text>', 'why (recorded in agent.cancelled)')
      .addOption(agentOpt())
      .addOption(json())
      .addOption(nats())
      .addOption(data())
      .action(async (agentId, opts) => (await import('./agents.ts')).cancel(agentId, opts));
  },

  review(program: Command): void {
    program
      .command('review')
      .description('Show the action log: every file the agent and its descendants changed since the last review.')
      .option('--diff', 'print unified diffs')
      .option('--of <agentId>', "whose log (default: --agent's own)")
      .addOption(agentOpt())
      .addOption(json())
      .addOption(nats())
      .addOption(data())
      .action(async (opts) => (await import('./review.ts')).review(opts));

    for (const verb of ['accept', 'reject'] as const) {
      const command = program.command(verb);
      if (verb === 'accept') {
        command.option('-i, --interactive', 'show each diff and ask; accept the files answered y, as shown');
      }
      command
        .description(
          verb === 'accept'
            ? 'Accept changes (all, or these paths / hunks): the base moves forward.'
            : 'Reject changes (all, or these paths / hunks): restore the base on disk; conflicts are left alone.',
        )
        .argument('[paths...]', 'files (default: all)')
        .option('--hunk <id...>', 'only these hunk ids (see skein review)')
        .addOption(agentOpt())
        .addOption(json())
        .addOption(nats())
        .addOption(data())
        .action(async (paths, opts) => (await import('./review.ts'))[verb](paths, opts));
    }

    program
      .command('undo-reject')
      .description('Re-apply what the last reject-all removed.')
      .addOption(agentOpt())
      .addOption(json())
      .addOption(nats())
      .addOption(data())
      .action(async (opts) => (await import('./review.ts')).undoReject(opts));
  },

  approvals(program: Command): void {
    program
      .command('approvals')
      .description('Pending permission requests of the agent and its descendants, then new ones as they come.')
      .option('--once', 'list and exit')
      .option(
        '--watch',
        'answer each request as it comes: y (allow once), n (deny), a (always: learns the rule shown); ' +
          'without a TTY, one JSON line per request and answers read from stdin lines',
      )
      .addOption(agentOpt())
      .addOption(json())
      .addOption(nats())
      .addOption(data())
      .action(async (opts) => (await import('./approvals.ts')).approvals(opts));

    for (const verb of ['approve', 'deny'] as const) {
      program
        .command(verb)
        .description(`${verb === 'approve' ? 'Allow' : 'Deny'} a pending permission request (as the root, or --agent).`)
        .argument('<requestId>')
        .option(
          '--always',
          `also ${verb === 'approve' ? 'allow' : 'deny'} such calls from now on ` +
            '(a rule learned into .skein/policy.json)',
        )
        .option('--pattern <regex>', 'the rule to learn with --always (default: extracted from the request)')
        .addOption(agentOpt())
        .addOption(json())
        .addOption(nats())
        .addOption(data())
        .action(async (requestId, opts) =>
          (await import('./approvals.ts')).answer(requestId, verb === 'approve', opts),
        );
    }
  },
} satisfies Record<string, (program: Command) => void>;

/** Every client command, for the fast entry (`skein <command>` with one of these names). */
export function registerClientCommands(program: Command): void {
  for (const register of Object.values(clientCommands)) register(program);
}
