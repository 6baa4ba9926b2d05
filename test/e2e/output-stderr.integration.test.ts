/**
 * A terminal's output never reaches the runtime's own stderr. xterm (the headless screen) logged every parse
 * error with console.error and its parser's state, ~0.8 KB a time; a DEL byte on the ground state is one, so an
 * agent printing binary output (or DEL bytes on purpose) wrote to the operator's log as fast as it printed,
 * until the disk under that log was full. Live: `skein up --embedded` (real PTY, real shell), and `skein replay
 * --screen`, which builds the same screen from the log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startEmbeddedCli, type EmbeddedRun } from '../support/cli.ts';

const DELS = 4_000;

describe("a terminal's output and the runtime's stderr", { timeout: 120_000 }, () => {
  let run: EmbeddedRun;
  const call = async (type: string, body: unknown) => {
    const r = await runCli(['call', type, JSON.stringify(body), '--data', run.data]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    return JSON.parse(r.stdout) as Record<string, any>;
  };

  beforeAll(async () => {
    run = await startEmbeddedCli({ policy: { default: 'allow' } });
  });
  afterAll(async () => run?.dispose());

  it('stays quiet while an agent prints DEL bytes and malformed sequences, live and on replay', async () => {
    const { terminalId } = await call('terminal.open', {});
    const before = run.up.stderr().length;
    // DEL bytes on the ground state, then inside a CSI, an unterminated OSC, C1 controls: each a parse error or
    // an unknown sequence to xterm. The canary is printed between them and must reach the output only.
    const command =
      `head -c ${DELS} /dev/zero | tr '\\0' '\\177'; printf '\\033[1;\\1772mCANARY-9f3a\\033]999;\\177\\n'; ` +
      `printf '\\302\\233\\302\\220x\\033P\\177\\033\\\\\\n'; echo done`;
    const reply = await call('terminal.exec', { terminalId, command, timeoutMs: 30_000 });
    expect(reply['exitCode']).toBe(0);
    const read = await call('terminal.read', { terminalId });
    expect(read['output']).toContain('CANARY-9f3a');
    // The runtime still parses the screen after them (the shell's prompt and `done` are on it).
    const screen = await call('terminal.read', { terminalId, screen: true });
    expect((screen['screen'].lines as string[]).join('\n')).toContain('done');

    const added = run.up.stderr().slice(before);
    expect(added).not.toContain('xterm');
    expect(added).not.toContain('CANARY');
    expect(added.length, added.slice(0, 400)).toBeLessThan(512);

    const replayed = await runCli(['replay', '--screen', terminalId, '--data', run.data]);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(replayed.stdout).toContain('done');
    expect(replayed.stderr).toBe('');
  });
});
