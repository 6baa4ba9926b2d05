/**
 * @module
 * `skein`: argv → commander → one subcommand module, imported lazily so that
 * start-up stays fast. Exit codes: 0 ok, 1 failed, 2 bad usage (some
 * subcommands add their own, e.g. `policy check`).
 */
import { Command, CommanderError, Option } from 'commander';
import { action, EXIT, fail } from './output.ts';

// `skein schema | head` closes stdout early: that is the reader's choice, not an error worth a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
  throw err;
});

const program = new Command('skein')
  .description('A runtime that lets AI coding agents operate a machine: terminals, edits, permissions, sub-agents.')
  .version('0.1.0')
  .exitOverride()
  .showHelpAfterError();

const logLevel = () =>
  new Option('--log-level <level>', 'log level (or SKEIN_LOG_LEVEL)').choices([
    'trace',
    'debug',
    'info',
    'warn',
    'error',
    'fatal',
    'silent',
  ]);
const data = () =>
  new Option(
    '--data <dir>',
    'data dir (or SKEIN_DATA; default $XDG_STATE_HOME/skein/<workspace id>, ~/.local/state if unset)',
  );
const nats = () =>
  new Option('--nats <url>', 'NATS URL of a runtime (or SKEIN_NATS_URL); default: the runtime in --data');

program
  .command('up')
  .description(
    'Run the runtime. Mode: --nats/SKEIN_NATS_URL → networked; ' +
      'else nats-server on PATH → private broker; else embedded.',
  )
  .addOption(nats())
  .option('--creds <file>', "networked: the host's .creds (from `skein auth init`)")
  .option('--signing-key <file>', 'networked: the account signing key the host mints agent creds with (account.nk)')
  .option('--embedded', 'force embedded mode (no broker; JSONL log in the data dir)')
  .option('--private', 'force a private nats-server (fails if nats-server is missing)')
  .addOption(data())
  .option('--workspace <dir>', 'root agent workspace (default: current directory)')
  .option(
    '--root <agentId>',
    'root agent id (default main); with --host, claims the root (refused if another host serves it)',
  )
  .option(
    '--host <name>',
    'networked: join as this named host (or SKEIN_HOST); the first host serves the root, the others placed agents',
  )
  .option('--ui', 'also serve the web console (private broker only) and print its one-time URL')
  .addOption(logLevel())
  .action(async (opts) => (await import('./up.ts')).up(opts));

program
  .command('auth')
  .description('Identities for an existing NATS deployment (networked mode).')
  .command('init')
  .description(
    'Write the operator, account and system JWTs, the account signing key, host creds and a nats-server ' +
      'config snippet (all 0600) for `skein up --nats <url> --creds host.creds --signing-key account.nk`.',
  )
  .option('--out <dir>', 'where to write them (default: <data>/auth); keep it outside the workspace')
  .option('--host <name...>', 'named hosts (skein up --host) that each get their own creds file, host-<name>.creds')
  .addOption(data())
  .action(async (opts) => (await import('./auth-init.ts')).authInitCommand(opts));

program
  .command('ui')
  .description('Serve the web console for the running runtime on loopback; prints a one-time URL (private broker).')
  .addOption(data())
  .option('--port <port>', 'HTTP port on 127.0.0.1 (default: a free one)')
  .addOption(logLevel())
  .action(async (opts) => (await import('./ui.ts')).uiCommand(opts));

program
  .command('call')
  .description('Send one command and print the reply (the `nats req` of skein).')
  .argument('<type>', 'command type, e.g. agent.spawn')
  .argument('[json]', 'the command data as JSON, e.g. \'{"label":"a"}\'', '{}')
  .option('--agent <id>', 'agent whose subject to send on (default: the root agent)')
  .option('--id <commandId>', 'command id (repeat it to retry idempotently)')
  .option('--timeout <ms>', 'reply timeout in ms', '30000')
  .addOption(nats())
  .addOption(data())
  .action(async (type, json, opts) => (await import('./call.ts')).callCommand(type, json, opts));

program
  .command('tail')
  .description('Print live facts, one readable line each (output summarized).')
  .argument('[pattern]', 'subject pattern (default: skein.evt.> and skein.out.>)')
  .option('--json', 'print raw envelopes as JSON lines')
  .addOption(nats())
  .addOption(data())
  .action(async (pattern, opts) => (await import('./tail.ts')).tail(pattern, opts));

program
  .command('creds')
  .description('Write a NATS .creds file for one agent (operator only): an external brain acts as exactly that agent.')
  .argument('<agentId>', 'the agent (must exist and be running)')
  .option('--out <file>', 'write here (0600) instead of stdout')
  .addOption(data())
  .action(async (agentId, opts) => (await import('./creds.ts')).credsCommand(agentId, opts));

program
  .command('replay')
  .description('Rebuild state from the log; print a timeline, the digest, an export, or a terminal screen.')
  .option('--until <seq>', 'stop after this sequence number')
  .option('--digest', 'print only the state digest')
  .option('--export <file>', 'write the log as JSONL ({seq, subject, fact} per line), then the terminal output')
  .option('--from-file <file>', 'replay a JSONL export or embedded log instead of the runtime log')
  .option('--screen <terminalId>', "render that terminal's screen from its output chunks (with --at)")
  .option('--at <seq>', 'output stream sequence for --screen (default: the end)')
  .option('--json', 'timeline as JSON lines')
  .addOption(nats())
  .addOption(data())
  .action(async (opts) => (await import('./replay.ts')).replayCommand(opts));

program
  .command('status')
  .description('Live runtime status and state digest.')
  .option('--digest', 'print only the digest')
  .option('--json', 'print JSON')
  .addOption(nats())
  .addOption(data())
  .action(async (opts) => (await import('./status.ts')).status(opts));

const json = () => new Option('--json', 'print the reply as JSON');
const agentOpt = () => new Option('--agent <id>', 'act as this agent (default: the root agent)');

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
  program
    .command(verb)
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
      `also ${verb === 'approve' ? 'allow' : 'deny'} such calls from now on (a rule learned into .skein/policy.json)`,
    )
    .option('--pattern <regex>', 'the rule to learn with --always (default: extracted from the request)')
    .addOption(agentOpt())
    .addOption(json())
    .addOption(nats())
    .addOption(data())
    .action(async (requestId, opts) => (await import('./approvals.ts')).answer(requestId, verb === 'approve', opts));
}

program
  .command('demo')
  .description(
    'A root hands work to three sub-agents (terminals, a fuzzy edit, a confirmed ' +
      'write), then reviews, accepts and rejects. Embedded, temporary workspace.',
  )
  .option('--keep', 'keep the temporary workspace and log')
  .action(async (opts) => (await import('./demo.ts')).demo(opts));

program
  .command('mcp')
  .description(
    'MCP server (stdio; --http for Streamable HTTP) for Claude Code, Cursor, Zed…: one session is one agent. ' +
      'Uses the runtime serving this workspace, or starts one until the session ends.',
  )
  .option('--agent <id>', 'act as this existing agent (default: a new child of the root agent)')
  .option('--http <port>', 'serve Streamable HTTP on this port (0: a free one) instead of stdio')
  .option('--host <address>', 'address to listen on with --http (default 127.0.0.1)')
  .option('--token <token>', 'bearer token for --http (or SKEIN_MCP_TOKEN; default: a random one, printed)')
  .option('--workspace <dir>', 'the project to serve, when the client starts servers elsewhere (default: cwd)')
  .option('--private', 'start a private nats-server when no runtime runs (default: embedded)')
  .addOption(nats())
  .addOption(data())
  .addOption(logLevel())
  .action(async (opts) => {
    await action(async () => (await import('../mcp/command.ts')).mcp(opts));
    // A finished session must not linger on a socket or timer the runtime left.
    process.exit(process.exitCode ?? 0);
  });

const fleet = program.command('fleet').description('Fleets of scripted sub-agents.');
fleet
  .command('run')
  .description('Run a plan (JSON or YAML): sub-agents in parallel under the root, then print results and the review.')
  .argument('<plan>', 'plan.json or plan.yaml')
  .option('--diff', 'print the diffs of the review')
  .option('--timeout <ms>', 'stop waiting after this many ms and exit 1 (default: wait for every agent)')
  .addOption(agentOpt())
  .addOption(json())
  .addOption(nats())
  .addOption(data())
  .action(async (plan, opts) => (await import('./fleet.ts')).fleetRun(plan, opts));

// Standalone tools (no runtime); their modules load tree-sitter, so they are imported only when named.
const group = process.argv[2];
if (group === 'policy') (await import('./policy-command.ts')).registerPolicyCommands(program);
else
  program
    .command('policy')
    .description('Check a command or path against a policy file, without a runtime (skein policy check --help).')
    .allowUnknownOption();
if (group === 'edit') (await import('./edit-command.ts')).registerEditCommands(program);
else
  program
    .command('edit')
    .description('Apply edits to a file with the fuzzy edit kernel, without a runtime (skein edit apply --help).')
    .allowUnknownOption();

program
  .command('schema')
  .description('Print JSON Schema for every command, event and reply, or for one type (skein schema agent.spawn).')
  .argument('[type]', 'one command or fact type, e.g. file.write or agent.spawned')
  .action(async (type?: string) =>
    action(async () => {
      await (await import('./schema.ts')).printSchema(type);
      return EXIT.ok;
    }),
  );

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  } else {
    fail(err);
  }
}
