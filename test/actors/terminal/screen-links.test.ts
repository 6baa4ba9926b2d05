/**
 * A screen lists hyperlinks (OSC 8) among a chunk's sequences and prints their text, but keeps no link: xterm kept
 * an entry per linked cell, up to its scrollback (200,000 links printed: 135 MB of one screen's heap), and nothing
 * in the runtime reads them. Checked on xterm's own link store, which must exist for the check to mean anything.
 */
import { TerminalScreen } from '../../../actors/terminal/terminal-screen.ts';

type LinkStore = { _dataByLinkId?: Map<number, unknown> };

describe('hyperlinks on a screen', () => {
  it('are listed and their text printed, and none is kept', async () => {
    const screen = new TerminalScreen(80, 24);
    try {
      let chunk = '';
      for (let n = 0; n < 5_000; n++) chunk += `\x1b]8;id=${n};https://example.test/${n}\x07L${n}\x1b]8;;\x07 `;
      const a = await screen.write(chunk);
      expect(a.sequences[0]).toEqual({ kind: 'osc', seq: 'OSC 8', value: 'id=0;https://example.test/0' });
      expect(a.sequenceCount).toBe(10_000);
      expect(screen.snapshot().lines.join(' ')).toContain('L4999');
      const store = (screen.term as unknown as { _core: { _oscLinkService?: LinkStore } })._core._oscLinkService;
      expect(store?._dataByLinkId).toBeInstanceOf(Map);
      expect(store!._dataByLinkId!.size).toBe(0);
    } finally {
      screen.dispose();
    }
  });
});
