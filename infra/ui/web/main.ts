/**
 * @module
 * The console page: trades the one-time token from the URL fragment for a
 * browser credential (kept in this tab's sessionStorage so a reload works),
 * connects to the broker's websocket listener with it, and wires the views.
 * Without a token or a stored credential it shows only how to get one.
 */
import '@xterm/xterm/css/xterm.css';
import './console.css';
import { credsAuthenticator, wsconnect } from '@nats-io/nats-core';
import { renderApprovals, approvalKeys, clickArming } from './approvals.ts';
import { ConsoleBus } from './bus.ts';
import { fill, h, shown } from './dom.ts';
import { logReader } from './log-reader.ts';
import { renderReview, runReview } from './review.ts';
import { partsOf, Store, type Ask, type Snapshot } from './store.ts';
import { Terminals } from './terminals.ts';
import { TimeTravel } from './time-travel.ts';
import { renderTree } from './tree.ts';

type Grant = { creds: string; websocketUrl: string; inboxPrefix: string; rootAgentId: string; hostId: string };

const GRANT_KEY = 'skein-console-grant';
const $ = (id: string) => document.getElementById(id)!;

themeToggle();
const grant = await obtainGrant();
if (grant) await start(grant);

async function obtainGrant(): Promise<Grant | undefined> {
  const fromUrl = new URLSearchParams(location.hash.slice(1)).get('token');
  history.replaceState(null, '', location.pathname);
  if (fromUrl) {
    const res = await fetch('/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: fromUrl }),
    });
    if (!res.ok) return locked(await res.text());
    const got = (await res.json()) as Grant;
    sessionStorage.setItem(GRANT_KEY, JSON.stringify(got));
    return got;
  }
  const stored = sessionStorage.getItem(GRANT_KEY);
  return stored
    ? (JSON.parse(stored) as Grant)
    : locked('Open the URL that `skein ui` printed: it carries a one-time token.');
}

function locked(why: string): undefined {
  fill($('locked'), h('p', { role: 'alert', class: 'locked' }, why));
  return undefined;
}

async function start(grant: Grant): Promise<void> {
  const status = $('connection');
  let nc: Awaited<ReturnType<typeof wsconnect>>;
  try {
    nc = await wsconnect({
      servers: grant.websocketUrl,
      authenticator: credsAuthenticator(new TextEncoder().encode(grant.creds)),
      inboxPrefix: grant.inboxPrefix,
      name: 'skein-console',
    });
  } catch (err) {
    sessionStorage.removeItem(GRANT_KEY);
    return void locked(
      `Cannot reach the broker at ${grant.websocketUrl}: ${(err as Error).message}. Run \`skein ui\` again.`,
    );
  }
  $('app').hidden = false;
  status.textContent = `connected to ${grant.websocketUrl} as the console`;
  const bus = new ConsoleBus(nc, grant.rootAgentId);
  const reader = await logReader(nc);
  const store = new Store(bus);
  const notice = (text: string) => ($('notice').textContent = shown(text));
  store.onError = (err) => notice(`refresh failed: ${err.message}`);

  // Asks answered from this page, until a refresh no longer lists them.
  const answered = new Map<string, string>();
  // A view is drawn again only when what it shows changed: drawing it anew resets the operator's scroll and
  // focus, which an agent sending facts in a stream could otherwise do all the time (the console review).
  let asksDrawn = '';
  const arming = clickArming($('approvals'));
  // A click on an ask that just came under the pointer (drawn, moved up as the one above went) answers nothing.
  const click = (ask: Ask, decision: string) =>
    arming.armed(ask)
      ? answer(ask, decision)
      : notice(`${ask.requestId} just appeared or moved under the pointer: read it, then click again`);
  const renderAsks = () => {
    const key = JSON.stringify(store.snapshot.asks.map((a) => [a.requestId, answered.get(a.requestId)]));
    if (key !== asksDrawn) renderApprovals($('approvals'), store.snapshot, click, answered);
    asksDrawn = key;
    arming.sync();
    shownFirst(firstAsk());
  };
  let reviewDrawn = '';
  const answer = (ask: Ask, decision: string) => {
    if (answered.has(ask.requestId)) return;
    answered.set(ask.requestId, decision);
    renderAsks();
    void bus
      .call(bus.root, 'permission.decide', { requestId: ask.requestId, decision })
      .then((r) => notice(`${ask.requestId}: ${String(r['outcome'])}`))
      .catch((err: Error) => {
        answered.delete(ask.requestId);
        renderAsks();
        notice(err.message);
      })
      .finally(() => store.refreshSoon(['asks']));
  };
  const firstAsk = () => store.snapshot.asks.find((a) => !answered.has(a.requestId));
  const shownFirst = approvalKeys(
    firstAsk,
    answer,
    (ask) => notice(`${ask.requestId} just became the first request: read it, then press the key again`),
    () => !$('approvals-panel').hidden,
  );

  const terminals = new Terminals($('terminals'), bus, reader);
  const running = (s: Snapshot) => s.agents.filter((a) => a.status === 'running').map((a) => a.agentId);
  const timeTravel = new TimeTravel($('time-travel'), reader);
  store.subscribe((s) => {
    renderTree($('tree'), s, grant.hostId);
    for (const id of answered.keys()) if (!s.asks.some((a) => a.requestId === id)) answered.delete(id);
    renderAsks();
    $('approvals-count').textContent = String(s.asks.length);
    const reviewKey = JSON.stringify([
      s.reviewAgent,
      s.undoAvailable,
      s.agents.map((a) => a.agentId),
      s.files.map((f) => [
        f.path,
        f.status,
        f.agents,
        f.currentHash,
        textHash(f.diff),
        f.diffLeftOut,
        f.hunks.map((h) => h.id),
      ]),
    ]);
    if (reviewKey === reviewDrawn) return void terminals.sync(running(s));
    reviewDrawn = reviewKey;
    try {
      renderReview(
        $('review'),
        s,
        (action) =>
          void runReview(bus, s.reviewAgent, action)
            .then(notice)
            .catch((err: Error) => notice(err.message))
            .finally(() => store.refreshSoon(['review'])),
        (agentId) => store.reviewOf(agentId),
        (path) => store.loadFull(path),
      );
    } catch (err) {
      // Never a listing left from before, as if it were current: the panel says it could not draw this one.
      reviewDrawn = '';
      const why = `The review could not be drawn (${(err as Error).message}). Nothing here is current: `;
      fill($('review'), h('p', { class: 'cut-warning', role: 'alert' }, `${why}use skein review in a terminal.`));
    }
    void terminals.sync(running(s));
  });
  bus.watch('skein.evt.>', (fact) => {
    store.refreshSoon(partsOf(String(fact['type'])));
  });
  bus.watch(`skein.ask.${bus.root}.>`, () => store.refreshSoon(['asks']));
  tabs((name) => {
    if (name === 'time-travel') void timeTravel.load().catch((err: Error) => notice(err.message));
    // A fact reaches the console as the host appends it, maybe before the host has folded it: the refetch it
    // caused may have read the view without it. A tab the operator opens is fetched again.
    if (name === 'review') void store.refresh(['review']);
    if (name === 'approvals') {
      void store.refresh(['asks']);
      // The keys and buttons arm from when the asks come into view, not from when they were drawn behind another tab.
      shownFirst(firstAsk(), true);
      arming.sync();
    }
  });
  await store.refresh();
  document.body.dataset['ready'] = 'true';
}

/** The tab list: arrow keys move between tabs, as the ARIA tabs pattern asks. */
function tabs(onShow: (name: string) => void): void {
  const list = [...document.querySelectorAll<HTMLButtonElement>('[role=tab]')];
  const show = (tab: HTMLButtonElement) => {
    for (const t of list) {
      const selected = t === tab;
      t.setAttribute('aria-selected', String(selected));
      t.tabIndex = selected ? 0 : -1;
      $(t.getAttribute('aria-controls')!).hidden = !selected;
    }
    onShow(tab.getAttribute('aria-controls')!.replace(/-panel$/, ''));
  };
  for (const [i, tab] of list.entries()) {
    tab.addEventListener('click', () => show(tab));
    tab.addEventListener('keydown', (e) => {
      const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
      if (!step) return;
      const next = list[(i + step + list.length) % list.length]!;
      next.focus();
      show(next);
    });
  }
}

function themeToggle(): void {
  const button = $('theme');
  const apply = (theme: string) => {
    document.documentElement.dataset['theme'] = theme;
    button.setAttribute('aria-pressed', String(theme === 'dark'));
    localStorage.setItem('skein-theme', theme);
  };
  apply(localStorage.getItem('skein-theme') ?? (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'));
  button.addEventListener('click', () =>
    apply(document.documentElement.dataset['theme'] === 'dark' ? 'light' : 'dark'),
  );
}

/** A 32-bit FNV-1a of `text`: whether a diff changed, without keeping a copy of it. */
function textHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
