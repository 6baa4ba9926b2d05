/**
 * @module
 * `skein`: argv → commander → one subcommand module, imported lazily so that
 * start-up stays fast. Exit codes: 0 ok, 1 failed, 2 bad usage (some
 * subcommands add their own, e.g. `policy check`).
 */
import { clientCommands } from './client-commands.ts';
import { action, EXIT } from './output.ts';
import { agentOpt, data, json, logLevel, nats, newProgram, runProgram } from './program.ts';

const program = newProgram();

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

clientCommands.call(program);
clientCommands.tail(program);

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

clientCommands.status(program);
clientCommands.agents(program);
clientCommands.review(program);
clientCommands.approvals(program);

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
  .option(
    '--allowed-host <host...>',
    'with --http beyond loopback: a name clients reach it by (a Host header: mcp.example or mcp.example:8080)',
  )
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

await runProgram(program);
