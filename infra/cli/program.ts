/**
 * @module
 * What both CLI entries share: the `skein` program itself, the options several commands take, and the run
 * (argv → commander → exit code). main.ts registers every command; client-main.ts, the fast entry
 * skein.mjs picks for the commands that only talk to a runtime, registers those alone
 * (client-commands.ts), so both parse, validate and fail alike.
 */
import { Command, CommanderError, Option } from 'commander';
import { EXIT, fail } from './output.ts';

export function newProgram(): Command {
  return new Command('skein')
    .description('A runtime that lets AI coding agents operate a machine: terminals, edits, permissions, sub-agents.')
    .version('0.1.0')
    .exitOverride()
    .showHelpAfterError();
}

export const logLevel = () =>
  new Option('--log-level <level>', 'log level (or SKEIN_LOG_LEVEL)').choices([
    'trace',
    'debug',
    'info',
    'warn',
    'error',
    'fatal',
    'silent',
  ]);
export const data = () =>
  new Option(
    '--data <dir>',
    'data dir (or SKEIN_DATA; default $XDG_STATE_HOME/skein/<workspace id>, ~/.local/state if unset)',
  );
export const nats = () =>
  new Option('--nats <url>', 'NATS URL of a runtime (or SKEIN_NATS_URL); default: the runtime in --data');
export const json = () => new Option('--json', 'print the reply as JSON');
export const agentOpt = () => new Option('--agent <id>', 'act as this agent (default: the root agent)');

/** Parses argv and runs the command; exit codes: 0 ok, 1 failed, 2 bad usage (commander's errors too). */
export async function runProgram(program: Command): Promise<void> {
  // `skein schema | head` closes stdout early: that is the reader's choice, not an error worth a stack trace.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
    throw err;
  });
  try {
    await program.parseAsync(process.argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    } else {
      fail(err);
    }
  }
}
