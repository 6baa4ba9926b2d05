/**
 * @module
 * At most `max` hyperlinks (OSC 8) made in one xterm terminal; past that a link's text is printed as plain text.
 * xterm keeps an entry for every linked cell up to its scrollback: an agent printing links over and over grew one
 * screen by 135 MB (200,000 links). The runtime's screens keep none (terminal-screen.ts); the web console shows
 * where a link goes, so it keeps the first `max` of each terminal. Pure: it only registers a parser handler.
 */

/** What `capLinks` needs of a terminal: xterm's parser (the browser's and the headless one are the same). */
export type OscParserHost = {
  parser: { registerOscHandler(ident: number, callback: (data: string) => boolean | Promise<boolean>): unknown };
};

/** The links one console terminal makes at most. */
export const CONSOLE_LINKS = 1_000;

/**
 * Lets xterm make the first `max` links (an OSC 8 with a target) and no more; a link's end (an OSC 8 without one)
 * always reaches it. `onCapped` is told once, at the first link refused.
 */
export function capLinks(term: OscParserHost, max: number, onCapped?: () => void): void {
  let made = 0;
  term.parser.registerOscHandler(8, (data) => {
    // `params;uri`: an empty uri ends the current link.
    const uri = data.slice(data.indexOf(';') + 1);
    if (data.indexOf(';') < 0 || uri === '') return false;
    if (made < max) {
      made++;
      return false;
    }
    if (made++ === max) onCapped?.();
    return true;
  });
}
