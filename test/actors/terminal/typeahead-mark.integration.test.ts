/**
 * The rc's typeahead drain on a real bash: it runs only while the host's typeahead mark is set (issue 15: the
 * drain's read waits out its timeout: at 1 ms, most of a short command's time in the shell; now 50 ms). Marked, bytes a
 * command left unread are discarded before the prompt (issue 11 hole 5); unmarked, the shell does not read
 * them, so the host must set the mark before every write that is not a command line (TerminalSession,
 * terminal-delivery.integration.test.ts checks it end to end).
 */
import { spawn, type IPty } from '@lydell/node-pty';
import { terminalEnv } from '../../../actors/terminal/pty-spawn.ts';
import { commandInput, writeRcFile, type RcFiles } from '../../../actors/terminal/shell-integration.ts';

const END = '\x1b]133;D;';
const PROMPT = '\x1b]133;B\x07';
const RUNS = '\x1b]133;C\x07';

let rc: RcFiles;
let pty: IPty;
let output = '';
beforeEach(() => {
  rc = writeRcFile();
  output = '';
  pty = spawn('bash', ['--noprofile', '--rcfile', rc.path, '-i'], {
    name: 'xterm-256color',
    cols: 200,
    rows: 24,
    cwd: rc.dir,
    env: terminalEnv({ terminalId: 't', agentId: 'a', shellPath: '/usr/bin/bash' }),
  });
  pty.onData((d) => {
    output += d;
  });
});
afterEach(() => {
  pty.kill('SIGKILL');
  rc.remove();
});

const count = (needle: string) => output.split(needle).length - 1;

/** Runs `sleep 0.3` and writes `typed` while it sleeps (marking first when asked); then types `echo END\r`. */
async function leaveTypeahead(mark: boolean): Promise<string> {
  // Counts are taken from the first prompt on: readline may draw a prompt again (a resize as the shell starts).
  await expect.poll(() => count(PROMPT), { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
  const runs = count(RUNS);
  const ends = count(END);
  rc.writeCommand('sleep 0.3');
  pty.write(commandInput());
  await expect.poll(() => count(RUNS), { timeout: 10_000 }).toBe(runs + 1);
  if (mark) rc.markTypeahead();
  pty.write('echo LEFT');
  await expect.poll(() => count(END), { timeout: 10_000 }).toBe(ends + 1);
  const sleepEnded = output.lastIndexOf(END);
  await expect.poll(() => output.indexOf(PROMPT, sleepEnded), { timeout: 10_000 }).toBeGreaterThan(-1);
  // Typed at the prompt, as terminal.write types a line: what the drain left is in front of it.
  pty.write('echo END\r');
  await expect.poll(() => count(END), { timeout: 10_000 }).toBe(ends + 2);
  // From the prompt after `sleep` on.
  return output.slice(output.indexOf(PROMPT, sleepEnded) + PROMPT.length);
}

describe('the typeahead drain', () => {
  it('discards the bytes a command left unread when the mark is set', async () => {
    const after = await leaveTypeahead(true);
    expect(after).toContain(`${RUNS}END\r\n`);
    expect(after).not.toContain('LEFT');
  });

  it('leaves them to the prompt when the mark is not set (the host marks before every such write)', async () => {
    const after = await leaveTypeahead(false);
    expect(after).toContain('LEFTecho END');
  });
});
