/**
 * @module
 * Text an agent chose, made safe to show a person who decides on it: Unicode format characters (bidi
 * embeddings, overrides and isolates, marks, zero-width characters, the BOM, tag characters) and the line and
 * paragraph separators change how the text around them is drawn, not what it is. A right-to-left isolate
 * drew `print('ok⁧');os.system('touch PWNED') #⁩` as a printed string with the `os.system` inside it, and an
 * operator approved it (the console review of 3 December). Each such character is shown as `⟦U+2067⟧`. Pure.
 */

/** Format characters (Cf) and the line and paragraph separators (Zl, Zp). */
const INVISIBLE = /[\p{Cf}\p{Zl}\p{Zp}]/gu;
/** Those, and the control characters but newline and tab: what a terminal would act on (ESC starts a sequence). */
const INVISIBLE_OR_CONTROL = /[\p{Cf}\p{Zl}\p{Zp}\x00-\x08\x0b-\x1f\x7f-\x9f]/gu;

const code = (c: string) => `⟦U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}⟧`;

/**
 * `text` with every invisible or reordering character replaced by a visible `⟦U+XXXX⟧`; with `controls`, the
 * control characters too (for a terminal, which would run an escape sequence: the CLI's approvals).
 */
export function reveal(text: string, options: { controls?: boolean } = {}): string {
  return text.replace(options.controls ? INVISIBLE_OR_CONTROL : INVISIBLE, code);
}

/** Whether `text` holds a character `reveal` would show as a code. */
export function hasHidden(text: string): boolean {
  INVISIBLE.lastIndex = 0;
  const found = INVISIBLE.test(text);
  INVISIBLE.lastIndex = 0;
  return found;
}
