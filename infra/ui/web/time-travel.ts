/**
 * @module
 * Time travel: pick a terminal from the log and a point on a slider over
 * its output; the screen is rebuilt by `screenAt`, the very function behind
 * `skein replay --screen --at` (a headless xterm fed the logged chunks and
 * resizes up to that output sequence), and the facts logged around that
 * moment are listed beside it.
 */
import type { StoredFact } from '../../../schemas/index.ts';
import { screenAt } from '../../terminal/screen-replay.ts';
import { fill, h, shown } from './dom.ts';
import type { LogReader } from './log-reader.ts';

type Chunk = { seq: number; at: string };

/** Facts shown before and after the chosen moment. */
const FACTS_BEFORE = 8;
const FACTS_AFTER = 4;
/** The fact list reads at most this many of the latest facts. */
const FACTS_WINDOW = 5000;

export class TimeTravel {
  readonly #reader: LogReader;
  readonly #select = h('select', { 'aria-label': 'Terminal' });
  readonly #slider = h('input', { type: 'range', min: 0, max: 0, value: 0, 'aria-label': 'Point in the log' });
  readonly #where = h('p', { role: 'status', class: 'where' });
  readonly #screen = h('pre', { class: 'screen', 'aria-label': 'Screen at this point' });
  readonly #facts = h('ol', { class: 'facts', 'aria-label': 'Facts around this point' });
  #chunks: Chunk[] = [];
  #events: StoredFact[] = [];
  #token = 0;
  #picks = 0;

  constructor(el: HTMLElement, reader: LogReader) {
    this.#reader = reader;
    this.#select.addEventListener('change', () => void this.#pick(this.#select.value));
    this.#slider.addEventListener('input', () => void this.#show(Number(this.#slider.value)));
    fill(
      el,
      h('div', { class: 'tt-controls' }, h('label', {}, 'Terminal ', this.#select), this.#slider, this.#where),
      h('div', { class: 'tt-body' }, this.#screen, this.#facts),
    );
  }

  /** Re-reads the log: the terminals it holds and the latest facts. */
  async load(): Promise<void> {
    const last = await this.#reader.lastSeq('events');
    this.#events = [];
    for await (const f of this.#reader.read({ stream: 'events', fromSeq: Math.max(1, last - FACTS_WINDOW + 1) })) {
      this.#events.push(f);
    }
    const terminals: string[] = [];
    for await (const f of this.#reader.read({ stream: 'events', subject: 'skein.evt.*.terminal.*' })) {
      if (f.type === 'terminal.opened') terminals.push(String((f.data as { terminalId: string }).terminalId));
    }
    const chosen = this.#select.value;
    fill(this.#select, ...terminals.map((t) => h('option', { value: t, selected: t === chosen }, t)));
    if (terminals.length > 0) await this.#pick(this.#select.value || terminals[0]!);
  }

  /** Reads the chosen terminal's output points (the latest choice wins when picks overlap). */
  async #pick(terminalId: string): Promise<void> {
    const mine = ++this.#picks;
    const chunks: Chunk[] = [];
    for await (const f of this.#reader.read({ stream: 'output', subject: `skein.out.*.${terminalId}` })) {
      chunks.push({ seq: f.seq, at: f.at });
    }
    if (mine !== this.#picks) return;
    this.#chunks = chunks;
    this.#slider.max = String(Math.max(0, this.#chunks.length - 1));
    this.#slider.value = this.#slider.max;
    await this.#show(this.#chunks.length - 1);
  }

  /** Shows the screen after chunk `index` (the latest answer wins when the slider moves fast). */
  async #show(index: number): Promise<void> {
    const terminalId = this.#select.value;
    const chunk = this.#chunks[index];
    const mine = ++this.#token;
    const screen = await screenAt((o) => this.#reader.read(o), terminalId, chunk?.seq ?? 0);
    if (mine !== this.#token) return;
    this.#screen.textContent = shown(screen.lines.join('\n'));
    this.#screen.dataset['atSeq'] = String(screen.atSeq);
    this.#where.textContent =
      `${terminalId} at output seq ${screen.atSeq} (${screen.chunks} chunks), ${screen.cols}x${screen.rows}` +
      (chunk ? `, ${new Date(chunk.at).toLocaleTimeString()}` : '');
    this.#renderFacts(chunk?.at);
  }

  #renderFacts(at: string | undefined): void {
    const i = at === undefined ? 0 : this.#events.findIndex((f) => f.at > at);
    const cut = i === -1 ? this.#events.length : i;
    const around = this.#events.slice(Math.max(0, cut - FACTS_BEFORE), cut + FACTS_AFTER);
    fill(
      this.#facts,
      ...around.map((f) =>
        h(
          'li',
          { class: f.at > (at ?? '') ? 'after' : 'before' },
          h('span', { class: 'seq' }, `#${f.seq}`),
          ` ${new Date(f.at).toLocaleTimeString()} `,
          h('strong', {}, f.type),
          ` ${f.agentId}`,
        ),
      ),
    );
  }
}
