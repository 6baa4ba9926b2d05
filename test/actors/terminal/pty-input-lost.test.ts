/**
 * PtyInput's count of the agent's bytes that never reached the terminal, when writing stopped for good (the
 * shell's side gone): those queued then and those accepted after, reported once at the close. The PTY is a
 * descriptor opened read-only, so every write fails as a write to a PTY whose shell is gone does.
 */
import { closeSync, openSync } from 'node:fs';
import type { IPty } from '@lydell/node-pty';
import { PtyInput } from '../../../actors/terminal/pty-input.ts';

describe('PtyInput: input lost when writing stopped', () => {
  it("counts the agent's bytes queued and accepted after a failed write, once, at the close", () => {
    const fd = openSync('/dev/null', 'r');
    try {
      const pty = { _socket: { _handle: { fd }, destroyed: false }, write() {} } as unknown as IPty;
      const input = new PtyInput(pty);
      input.write('a'.repeat(100), true);
      input.write('typed by the host\r'); // not the agent's: not in the count
      input.write('b'.repeat(50), true);
      expect(input.pendingBytes).toBe(0);
      expect(input.close()).toBe(150);
      expect(input.close()).toBe(0);
    } finally {
      closeSync(fd);
    }
  });
});
