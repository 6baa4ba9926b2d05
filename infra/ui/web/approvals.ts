/**
 * @module
 * Pending approvals: each ask with the exact command, diff or content the
 * gate judged, and **Approve** / **Always** / **Deny** (keys a, s, d act on
 * the first ask). The answer is `permission.decide` on the root's subject.
 * Neither a key nor a click answers an ask that has just come under it: both
 * wait `ARM_MS` (approvalKeys, clickArming).
 */
import { fill, h } from './dom.ts';
import type { Ask, Snapshot } from './store.ts';
import { ASK_DETAIL_NAMES, ASK_INPUT_NAMES, detailCut } from '../../../schemas/ask-labels.ts';

const DECISIONS = { Approve: 'allow_once', Always: 'allow_always', Deny: 'deny_once' } as const;
const KEYS: Record<string, keyof typeof DECISIONS> = { a: 'Approve', s: 'Always', d: 'Deny' };

/**
 * `answered` holds the asks this page has already answered (request id →
 * decision): they show what was sent instead of buttons until the next
 * refresh drops them, so an answer can't be sent twice. Call `clickArming`'s
 * `sync` after drawing: the buttons of an ask just drawn, or drawn elsewhere,
 * are off until armed.
 */
export function renderApprovals(
  el: HTMLElement,
  snapshot: Snapshot,
  answer: (ask: Ask, decision: string) => void,
  answered: ReadonlyMap<string, string> = new Map(),
) {
  if (snapshot.asks.length === 0) return fill(el, h('p', { class: 'empty' }, 'No pending approvals.'));
  fill(
    el,
    ...snapshot.asks.map((ask) =>
      h(
        'article',
        { class: 'ask', 'aria-label': `${ask.tool} request ${ask.requestId} from ${ask.agentId}` },
        // The whole line of descent, not the id alone: a child named `rnain` reads like `main` on its own.
        h('header', {}, h('strong', {}, ask.tool), ` from ${lineOf(ask)}: ${ask.reason}`),
        ...details(ask),
        answeredNote(answered.get(ask.requestId)) ??
          h(
            'div',
            { role: 'group', 'aria-label': `answer ${ask.requestId}`, 'data-request-id': ask.requestId },
            ...Object.entries(DECISIONS).map(([name, decision]) =>
              h(
                'button',
                {
                  type: 'button',
                  class: `answer answer-${decision}`,
                  'aria-keyshortcuts': Object.entries(KEYS).find(([, n]) => n === name)?.[0],
                  // What an "always" answer persists, as the gate words it.
                  title: ask.options.find((o) => o.decision === decision)?.label,
                  onclick: () => answer(ask, decision),
                },
                name,
              ),
            ),
          ),
        h('p', { class: 'deadline' }, `denied automatically at ${new Date(ask.deadline).toLocaleTimeString()}`),
      ),
    ),
  );
}

function answeredNote(decision: string | undefined): HTMLElement | undefined {
  if (decision === undefined) return undefined;
  const name = Object.entries(DECISIONS).find(([, d]) => d === decision)?.[0] ?? decision;
  return h('p', { class: 'answered', role: 'status' }, `${name} sent`);
}

/**
 * How long an ask must have been where it is before it can be answered: the first one shown, for a/s/d; drawn
 * where its buttons are, for a click.
 */
export const ARM_MS = 1_000;

/**
 * Binds a/s/d to the first pending ask, unless the user is typing (a terminal, an input). A key answers only an
 * ask that has been first on the page for `ARM_MS`: an agent that withdraws a harmless ask just before the
 * key is pressed would otherwise get the next one, its own, answered (the console review of 3 December). Call
 * the returned function with the first ask each time the list is drawn; `tooSoon` is told of a key ignored.
 * `shown`: whether the asks are on screen. A key pressed elsewhere answers nothing (typing "status" on the tab
 * bar sent s, Always, for an ask the operator could not see); call the returned function again when they come
 * into view, so the arming starts then.
 */
export function approvalKeys(
  current: () => Ask | undefined,
  answer: (ask: Ask, decision: string) => void,
  tooSoon: (ask: Ask) => void = () => undefined,
  shown: () => boolean = () => true,
): (first: Ask | undefined, reshown?: boolean) => void {
  let firstId: string | undefined;
  let since = 0;
  document.addEventListener('keydown', (event) => {
    const target = event.target as HTMLElement | null;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (target?.closest('input, textarea, select, .xterm') || !shown()) return;
    const name = KEYS[event.key];
    const ask = current();
    if (!name || !ask) return;
    event.preventDefault();
    if (ask.requestId !== firstId || performance.now() - since < ARM_MS) return tooSoon(ask);
    answer(ask, DECISIONS[name]);
  });
  return (first, reshown = false) => {
    if (first?.requestId === firstId && !reshown) return;
    firstId = first?.requestId;
    since = performance.now();
  };
}

/**
 * Arms the answer buttons drawn in `list` (each ask's group, by its `data-request-id`): a click answers only an
 * ask whose buttons have been where they are on the screen for `ARM_MS`. When an ask is withdrawn or answered
 * elsewhere, the next one moves up under the pointer, and the click meant for the first would answer one the
 * operator never read (the approval-flows audit). Any move re-arms: a redraw that shifts an ask, a line of text
 * above it, the asks coming into view, the page coming back from a hidden tab, a scroll the page forced by
 * shrinking. The operator's own scrolling does not. Until armed, the buttons are `aria-disabled` (drawn faded).
 * `armed(ask)` measures again, so a move in the frame of the click counts; `sync()` measures at once (call it
 * after drawing the asks or showing them).
 */
export function clickArming(list: HTMLElement): { armed(ask: Ask): boolean; sync(): void } {
  const seen = new Map<string, { place: Place; since: number }>();
  const measure = (group: HTMLElement, now: number): boolean => {
    const id = group.dataset['requestId'] ?? '';
    const place = placeOf(group);
    const was = seen.get(id);
    const since = was === undefined || moved(was.place, place) ? now : was.since;
    seen.set(id, { place, since });
    const ready = now - since >= ARM_MS;
    for (const button of group.querySelectorAll('button')) {
      if (button.getAttribute('aria-disabled') !== String(!ready)) button.setAttribute('aria-disabled', String(!ready));
    }
    return ready;
  };
  const groups = () => [...list.querySelectorAll<HTMLElement>('[data-request-id]')];
  const sync = () => {
    const now = performance.now();
    const drawn = groups();
    for (const group of drawn) measure(group, now);
    for (const id of seen.keys()) if (!drawn.some((g) => g.dataset['requestId'] === id)) seen.delete(id);
  };
  const frame = () => {
    sync();
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  document.addEventListener('visibilitychange', () => {
    seen.clear();
    sync();
  });
  return {
    armed: (ask) => {
      const group = groups().find((g) => g.dataset['requestId'] === ask.requestId);
      return group !== undefined && measure(group, performance.now());
    },
    sync,
  };
}

/** Where an element is drawn: its box apart from scrolling, and each ancestor's scroll offset and room to scroll. */
type Place = { box: string; scroll: number[]; room: number[] };

function placeOf(el: HTMLElement): Place {
  const rect = el.getBoundingClientRect();
  let [x, y] = [rect.left, rect.top];
  const scroll: number[] = [];
  const room: number[] = [];
  for (let p = el.parentElement; p; p = p.parentElement) {
    x += p.scrollLeft;
    y += p.scrollTop;
    scroll.push(p.scrollLeft, p.scrollTop);
    room.push(p.scrollWidth - p.clientWidth, p.scrollHeight - p.clientHeight);
  }
  return { box: [x, y, rect.width, rect.height].map(Math.round).join(), scroll, room };
}

/**
 * Whether an element moved on the screen other than by a scroll of the operator's: its box moved in the page, or
 * a scroller that holds it scrolled while its room to scroll shrank (the page got shorter under a page scrolled
 * to its end, and everything above came down).
 */
function moved(was: Place, now: Place): boolean {
  if (was.box !== now.box || was.scroll.length !== now.scroll.length) return true;
  return now.scroll.some((s, i) => s !== was.scroll[i] && now.room[i]! < was.room[i]!);
}

/**
 * Whether `text` may not fit its box (24rem, ~20 lines; long lines wrap): the end of a command pushed out of
 * sight by 400 spaces or 60 blank lines is still what runs.
 */
export function tall(text: string): boolean {
  return text.split('\n').length > 18 || text.length > 1_200;
}

function tallWarning(name: string, text: string): string {
  const lines = text.split('\n').length;
  return (
    `The ${name} is long (${text.length} characters, ${lines} lines): scroll its box to the end and read all ` +
    'of it before answering.'
  );
}

/** The judged input, shown verbatim (the exact command line or path), and its parts when the shell split it. */
function details(ask: Ask): HTMLElement[] {
  const name = ASK_INPUT_NAMES[ask.tool] ?? 'input';
  const out = [
    ...(tall(ask.input) ? [h('p', { class: 'cut-warning', role: 'alert' }, tallWarning(name, ask.input))] : []),
    h('div', { class: 'field' }, h('span', { class: 'key' }, name), h('pre', { 'aria-label': name }, ask.input)),
  ];
  if (ask.detail !== undefined) {
    const label = ASK_DETAIL_NAMES[ask.tool] ?? 'detail';
    const cut = detailCut(ask.detail);
    if (cut !== undefined) {
      out.push(
        h(
          'p',
          { class: 'cut-warning', role: 'alert' },
          `Only the start of the ${label} is shown: ${cut} more characters are not. Approving approves them unseen.`,
        ),
      );
    }
    out.push(
      h('div', { class: 'field' }, h('span', { class: 'key' }, label), h('pre', { 'aria-label': label }, ask.detail)),
    );
  }
  if (ask.subCommands.length > 1) {
    const parts = h('pre', { 'aria-label': 'parts' }, ask.subCommands.join('\n'));
    out.push(h('div', { class: 'field' }, h('span', { class: 'key' }, 'parts'), parts));
  }
  return out;
}

/** `main › lead › helper`: the asking agent under its ancestors (root first). */
function lineOf(ask: Ask): string {
  return [...(ask.ancestors ?? [])].reverse().concat(ask.agentId).join(' › ');
}
