/**
 * The web console's terminals make at most CONSOLE_LINKS hyperlinks each (link-cap.ts): xterm keeps an entry per
 * linked cell up to its scrollback, so an agent printing links over and over grew a screen by 135 MB. Checked on a
 * real xterm (the headless build has the same parser and link store as the browser's) against the same
 * terminal without the cap, so that the store is shown to grow when nothing stops it.
 */
import xterm from '@xterm/headless';
import { capLinks, CONSOLE_LINKS } from '../../../machines/terminal/link-cap.ts';

type LinkStore = { _dataByLinkId?: Map<number, unknown> };
const store = (t: InstanceType<typeof xterm.Terminal>) =>
  (t as unknown as { _core: { _oscLinkService?: LinkStore } })._core._oscLinkService!._dataByLinkId!;

/** Writes `n` links (each its own id and target, then its end) and resolves once xterm parsed them. */
function links(t: InstanceType<typeof xterm.Terminal>, n: number): Promise<void> {
  let chunk = '';
  for (let i = 0; i < n; i++) chunk += `\x1b]8;id=${i};https://example.test/${i}\x07L${i}\x1b]8;;\x07 `;
  return new Promise((resolve) => t.write(chunk, resolve));
}

const term = () =>
  new xterm.Terminal({ cols: 80, rows: 24, scrollback: 1_000, allowProposedApi: true, logLevel: 'off' });

describe('capLinks', () => {
  it('makes the first links of a terminal and then prints their text only, telling once', async () => {
    const open = term();
    await links(open, 3_000);
    expect(store(open).size).toBeGreaterThan(2 * CONSOLE_LINKS);

    const capped = term();
    let told = 0;
    capLinks(capped, CONSOLE_LINKS, () => told++);
    await links(capped, 3_000);
    expect(store(capped).size).toBe(CONSOLE_LINKS);
    expect(told).toBe(1);
    // Every link's text is on the screen, capped or not.
    const b = capped.buffer.active;
    const last = [0, 1, 2].map((i) => b.getLine(b.baseY + b.cursorY - i)?.translateToString() ?? '').join('');
    expect(last).toContain('L2999');
    open.dispose();
    capped.dispose();
  });

  it('lets every link end through, and counts only links with a target', async () => {
    const t = term();
    capLinks(t, 2);
    await new Promise<void>((r) => t.write('\x1b]8;;\x07\x1b]8;id=x;\x07\x1b]8\x07', r));
    await links(t, 2);
    expect(store(t).size).toBe(2);
    await links(t, 5);
    expect(store(t).size).toBe(2);
    t.dispose();
  });
});
