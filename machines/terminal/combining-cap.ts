/**
 * @module
 * At most MAX_JOINED code points joined onto one cell of a screen. xterm appends every zero-width code point
 * (a combining mark, a variation selector, a joiner) to the cell before it, as a string that grows a rope node
 * each time: 21 MB of U+0301 after one `a` grew a runtime's heap by ~590 MB and on without end, so an agent could
 * print the runtime out of memory in seconds. Past the cap, each further joining code point gets a cell of its own
 * (width 1, one code point, as plain text is held) until one that does not join: a screen of 80 columns and 1,000
 * lines of scrollback then retains ~4 MB at worst (`a` and 4 marks, over and over), against 92 MB with a cap of 30
 * (Unicode's stream-safe limit) and no bound without one. Real text joins fewer: accents, jamo, Thai and Indic
 * marks, variation selectors, ZWJ (X11's xterm keeps 2 per cell). The log keeps every byte; only the screen's
 * cells differ past the cap.
 *
 * Done as a Unicode provider wrapping xterm's own (its width table decides what joins, so no code point can get
 * around a list of ours), with the count kept in the join state xterm passes from one code point to the next.
 * xterm resets that state at every control sequence, so a sequence between marks starts a new cell there too.
 * The state bits are all ours: xterm's default provider (UnicodeV6), the one wrapped, keeps none.
 */

/** Zero-width code points in a row that one cell takes. */
export const MAX_JOINED = 4;

/** xterm's Unicode provider (proposed API): its width table and how one code point follows the one before. */
type UnicodeProvider = {
  readonly version: string;
  wcwidth(codepoint: number): 0 | 1 | 2;
  charProperties(codepoint: number, preceding: number): number;
};

/** The parts of a headless or browser xterm this reaches: the proposed Unicode API and its service's providers. */
type CappableTerminal = {
  unicode: { register(provider: UnicodeProvider): void; activeVersion: string };
};

/** xterm's packing of charProperties: state << 3 | width << 1 | shouldJoin. */
const joins = (props: number) => (props & 1) === 1;
const stateOf = (props: number) => props >>> 3;
const pack = (state: number, width: number, join: boolean) => ((state & 0xffffff) << 3) | ((width & 3) << 1) | +join;
/** The state of a code point given a cell of its own past the cap: the next joining ones get one each too. */
const OVERFLOW = 0xffffff;

/** The provider `inner` with at most MAX_JOINED code points joined in a row. */
export function cappedProvider(inner: UnicodeProvider, max = MAX_JOINED): UnicodeProvider {
  return {
    version: `${inner.version}-capped`,
    wcwidth: (codepoint) => inner.wcwidth(codepoint),
    charProperties(codepoint, preceding) {
      const props = inner.charProperties(codepoint, preceding);
      if (!joins(props)) return pack(0, (props >>> 1) & 3, false);
      // Past the cap, until a code point that does not join: one cell each (a code point, no string), so the
      // screen holds them as it holds plain text.
      if (stateOf(preceding) === OVERFLOW) return pack(OVERFLOW, 1, false);
      const joined = (joins(preceding) ? stateOf(preceding) : 0) + 1;
      if (joined > max) return pack(OVERFLOW, 1, false);
      return pack(joined, (props >>> 1) & 3, true);
    },
  };
}

/**
 * Makes `term` join at most MAX_JOINED code points per cell. Returns false when this xterm does not expose its
 * active provider (a version whose internals moved): the screen records it (`combiningCapped`) and its test fails.
 */
export function capCombining(term: CappableTerminal): boolean {
  const service = (term as unknown as { _core?: { unicodeService?: { _activeProvider?: UnicodeProvider } } })._core
    ?.unicodeService;
  const active = service?._activeProvider;
  if (!active || typeof active.charProperties !== 'function' || typeof active.wcwidth !== 'function') return false;
  const capped = cappedProvider(active);
  term.unicode.register(capped);
  term.unicode.activeVersion = capped.version;
  return true;
}
