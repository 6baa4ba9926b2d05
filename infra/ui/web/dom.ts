/**
 * @module
 * A tiny element builder for the console page (no framework): attributes,
 * event handlers (`on<event>`) and children in one call. Every text it puts
 * on the page (children and tooltips) goes through `shown`: much of it is an
 * agent's (commands, paths, labels, diffs), and a bidi control in it could
 * make it read as something else.
 */
import { reveal } from '../../../machines/common/reveal.ts';
/**
 * Agent text as the page shows it: format characters and control characters (but newline and tab) as visible
 * codes. In a browser a control character draws as an empty box or nothing, while the program it is typed to
 * acts on it (`# x\x01\x04\x04` reads as a comment and ran as code in a python REPL).
 */
export const shown = (text: string): string => reveal(text, { controls: true });

type Attr = string | number | boolean | undefined | ((event: Event) => void);
type Child = Node | string | undefined | null | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, Attr> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? '' : name === 'title' ? shown(String(value)) : String(value));
  }
  appendAll(el, children);
  return el;
}

/**
 * Appends `children` to `el` one by one. Never spread a long list into `h` or `append`: a diff of 170,000 lines
 * passed as arguments overflowed the stack, and every later redraw of the page failed with it.
 */
export function appendAll(el: Element, children: readonly Child[]): void {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    el.append(typeof child === 'string' ? shown(child) : child);
  }
}

/** Replaces the children of `el`. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  appendAll(el, children);
}

/** The last token of a dotted subject, or the token at `index`. */
export function token(subject: string, index: number): string {
  return subject.split('.')[index] ?? '';
}
