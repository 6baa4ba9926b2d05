/**
 * @module
 * Live terminals: one xterm.js per terminal, filled from its logged output
 * (SKEIN_OUTPUT) and then from `skein.out.…` as it arrives (chunks are placed
 * by their byte offset, so a chunk seen twice is written once). A terminal
 * waiting for input is highlighted. Typing is a `terminal.write` on the
 * terminal's agent subject, so it passes the same gate as the agent's own;
 * resizing the panel resizes the PTY (`terminal.resize`).
 */
import { isTerminalReply } from '../../../machines/terminal/terminal-replies.ts';
import { capCombining } from '../../../machines/terminal/combining-cap.ts';
import { CONSOLE_LINKS, capLinks } from '../../../machines/terminal/link-cap.ts';
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import type { ConsoleBus, Reply } from './bus.ts';
import { h, token, shown } from './dom.ts';
import type { LogReader } from './log-reader.ts';

type Panel = {
  agentId: string;
  terminalId: string;
  term: Terminal;
  fit: FitAddon;
  el: HTMLElement;
  status: HTMLElement;
  /** Why the last typed key or resize was refused (the gate's answer). */
  refused: HTMLElement;
  nextOffset: number;
  /** Live chunks that arrived while the history was still loading. */
  early: Reply[] | undefined;
};

/** How long a typed key may wait for an approval before the page stops waiting for its reply. */
const WRITE_TIMEOUT_MS = 10 * 60_000;
/** Closed terminals whose panels stay on the page. */
const MAX_CLOSED_PANELS = 8;

export class Terminals {
  readonly #panels = new Map<string, Panel>();
  /** Closed panels still shown, oldest first. */
  readonly #closedOrder: string[] = [];
  readonly #bus: ConsoleBus;
  readonly #reader: LogReader;
  readonly #el: HTMLElement;

  constructor(el: HTMLElement, bus: ConsoleBus, reader: LogReader) {
    this.#el = el;
    this.#bus = bus;
    this.#reader = reader;
    bus.watch('skein.out.>', (chunk, subject) => this.#output(token(subject, 3), chunk));
    bus.watch('skein.evt.*.terminal.>', (fact, subject) => this.#fact(token(subject, 2), fact));
  }

  /** Opens a panel for every running terminal of `agentIds` that has none yet. */
  async sync(agentIds: string[]): Promise<void> {
    for (const agentId of agentIds) {
      const listed = await this.#bus.call(agentId, 'terminal.list').catch(() => ({ terminals: [] }));
      // The root's list holds every agent's terminals: each panel is named for (and types as) its owner.
      for (const t of listed['terminals'] as Array<{ terminalId: string; agentId?: string; status: string }>) {
        if (t.status !== 'closed') await this.#open(t.agentId ?? agentId, t.terminalId);
      }
    }
  }

  async #open(agentId: string, terminalId: string): Promise<void> {
    if (this.#panels.has(terminalId)) return;
    const term = new Terminal({
      cols: 80,
      rows: 24,
      convertEol: false,
      scrollback: 1000,
      fontSize: 13,
      // Not a line in the browser's console per parse error of an agent's binary output (a DEL byte is one).
      logLevel: 'off',
      // For term.unicode (capCombining below).
      allowProposedApi: true,
      // A hyperlink an agent printed (OSC 8) can say one address and go to another: never opened from here,
      // its target is shown instead.
      linkHandler: {
        activate: (_event, uri) => {
          status.textContent = shown(`link to ${uri} (not opened from the console)`);
        },
      },
    });
    // An agent's flood of combining marks would grow one cell of this page without bound (combining-cap.ts).
    capCombining(term);
    const fit = new FitAddon();
    term.loadAddon(fit);
    const status = h('p', { role: 'status', class: 'term-status' });
    // An agent's flood of hyperlinks would keep an entry per linked cell in this page (link-cap.ts).
    capLinks(term, CONSOLE_LINKS, () => {
      status.textContent = `over ${CONSOLE_LINKS} links printed here: the rest show as text`;
    });
    const refused = h('p', { role: 'alert', class: 'term-refused' });
    const screen = h('div', { class: 'term-screen' });
    const el = h(
      'section',
      { class: 'terminal', 'aria-label': `terminal ${terminalId} of ${agentId}`, 'data-terminal': terminalId },
      h('h3', {}, `${terminalId} `, h('span', { class: 'agents' }, `(${agentId})`)),
      screen,
      status,
      refused,
    );
    this.#el.append(el);
    term.open(screen);
    const panel: Panel = { agentId, terminalId, term, fit, el, status, refused, nextOffset: 0, early: [] };
    this.#panels.set(terminalId, panel);
    // Keys go out one write at a time, in order: concurrent writes could reach the terminal reordered (a line
    // judged at Enter without its last letters). Keys typed while a write is in flight are sent together next.
    let pending = '';
    let sending = false;
    const flush = async (): Promise<void> => {
      sending = true;
      while (pending !== '') {
        const data = pending;
        pending = '';
        await this.#bus
          .call(agentId, 'terminal.write', { terminalId, data }, WRITE_TIMEOUT_MS)
          .catch((err: Error) => (refused.textContent = shown(`typing refused: ${err.message}`)));
      }
      sending = false;
    };
    term.onData((data) => {
      // xterm answers a program's queries by itself (the host's own screen answers them already): only what
      // the operator typed goes out, or an agent could make the log say the operator typed its replies.
      if (isTerminalReply(data)) return;
      // Cleared when the next key is sent, not when an earlier key's reply comes back after the refusal.
      refused.textContent = '';
      pending += data;
      if (!sending) void flush();
    });
    await this.#history(panel);
    this.#watchSize(panel, screen);
  }

  async #history(panel: Panel): Promise<void> {
    for await (const f of this.#reader.read({
      stream: 'events',
      subject: `skein.evt.*.terminal.${panel.terminalId}`,
    })) {
      const d = f.data as { cols?: number; rows?: number };
      if ((f.type === 'terminal.opened' || f.type === 'terminal.resized') && d.cols && d.rows) {
        panel.term.resize(d.cols, d.rows);
      }
      if (f.type === 'terminal.input.awaited') this.#awaiting(panel, (f.data as { prompt?: string }).prompt ?? '');
      if (f.type === 'terminal.input.written' || f.type === 'terminal.command.finished') this.#awaiting(panel);
    }
    for await (const f of this.#reader.read({ stream: 'output', subject: `skein.out.*.${panel.terminalId}` })) {
      this.#write(panel, f.data as Reply);
    }
    const early = panel.early ?? [];
    panel.early = undefined;
    for (const chunk of early) this.#write(panel, chunk);
  }

  #output(terminalId: string, fact: Reply): void {
    const panel = this.#panels.get(terminalId);
    if (!panel) return;
    const data = fact['data'] as Reply;
    if (panel.early) panel.early.push(data);
    else this.#write(panel, data);
  }

  #write(panel: Panel, chunk: Reply): void {
    const offset = Number(chunk['offset']);
    const bytes = Number(chunk['bytes']);
    if (offset < panel.nextOffset) return;
    panel.nextOffset = offset + bytes;
    panel.term.write(String(chunk['data'] ?? ''));
  }

  #fact(agentId: string, fact: Reply): void {
    const data = (fact['data'] ?? {}) as { terminalId?: string; cols?: number; rows?: number; prompt?: string };
    if (fact['type'] === 'terminal.opened' && data.terminalId) void this.#open(agentId, data.terminalId);
    const panel = data.terminalId ? this.#panels.get(data.terminalId) : undefined;
    if (!panel) return;
    if (fact['type'] === 'terminal.resized' && data.cols && data.rows) panel.term.resize(data.cols, data.rows);
    if (fact['type'] === 'terminal.input.awaited') this.#awaiting(panel, data.prompt ?? '');
    if (['terminal.input.written', 'terminal.command.finished', 'terminal.closed'].includes(String(fact['type']))) {
      this.#awaiting(panel);
    }
    if (fact['type'] === 'terminal.closed' && !panel.el.classList.contains('closed')) {
      panel.el.classList.add('closed');
      // The last closed panels stay to be read; older ones go, or an agent opening and closing terminals in a
      // loop would grow the page without end (the console review: 120 cycles, 122 panels).
      this.#closedOrder.push(data.terminalId!);
      while (this.#closedOrder.length > MAX_CLOSED_PANELS) {
        const old = this.#panels.get(this.#closedOrder.shift()!);
        if (!old) continue;
        old.term.dispose();
        old.el.remove();
        this.#panels.delete(old.terminalId);
      }
    }
  }

  /** Highlights a terminal whose program waits for input (prompt given), or clears it. */
  #awaiting(panel: Panel, prompt?: string): void {
    panel.el.classList.toggle('input-required', prompt !== undefined);
    panel.el.toggleAttribute('data-input-required', prompt !== undefined);
    panel.status.textContent = prompt === undefined ? '' : shown(`input required: ${prompt}`);
  }

  /** Resizing the panel (CSS `resize`) resizes the PTY to what fits; the first observation is the initial size. */
  #watchSize(panel: Panel, screen: HTMLElement): void {
    let first = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    new ResizeObserver(() => {
      if (first) return void (first = false);
      clearTimeout(timer);
      timer = setTimeout(() => {
        const dims = panel.fit.proposeDimensions();
        if (!dims || (dims.cols === panel.term.cols && dims.rows === panel.term.rows)) return;
        panel.term.resize(dims.cols, dims.rows);
        void this.#bus
          .call(panel.agentId, 'terminal.resize', { terminalId: panel.terminalId, cols: dims.cols, rows: dims.rows })
          .catch((err: Error) => (panel.refused.textContent = shown(`resize refused: ${err.message}`)));
      }, 200);
    }).observe(screen);
  }
}
