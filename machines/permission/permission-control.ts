/**
 * @module
 * Control characters in what the gate judges. A command reaches bash through a terminal, where the tty
 * driver and readline act on control bytes before bash parses anything: CR ends the line, Ctrl-C aborts
 * it, Ctrl-\ and Ctrl-Z raise signals and flush input, Ctrl-U and Ctrl-W kill text, Ctrl-D deletes or
 * ends the shell, Ctrl-O runs the line and fetches the next, Ctrl-V makes the next byte literal, ESC
 * starts key sequences, a tab completes. The parser sees none of that, so the text it approves would not
 * be the text bash runs. Such input is refused, naming the character and where it is; never normalised.
 * Pure.
 */

/** C0 controls (names from the Unicode standard) with the key that types them. */
const C0_NAMES = [
  'NULL',
  'START OF HEADING',
  'START OF TEXT',
  'END OF TEXT',
  'END OF TRANSMISSION',
  'ENQUIRY',
  'ACKNOWLEDGE',
  'BELL',
  'BACKSPACE',
  'CHARACTER TABULATION',
  'LINE FEED',
  'LINE TABULATION',
  'FORM FEED',
  'CARRIAGE RETURN',
  'SHIFT OUT',
  'SHIFT IN',
  'DATA LINK ESCAPE',
  'DEVICE CONTROL ONE',
  'DEVICE CONTROL TWO',
  'DEVICE CONTROL THREE',
  'DEVICE CONTROL FOUR',
  'NEGATIVE ACKNOWLEDGE',
  'SYNCHRONOUS IDLE',
  'END OF TRANSMISSION BLOCK',
  'CANCEL',
  'END OF MEDIUM',
  'SUBSTITUTE',
  'ESCAPE',
  'INFORMATION SEPARATOR FOUR',
  'INFORMATION SEPARATOR THREE',
  'INFORMATION SEPARATOR TWO',
  'INFORMATION SEPARATOR ONE',
];

/** `U+000D CARRIAGE RETURN (Ctrl-M)`: how a refusal names a character. */
export function describeChar(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  if (code < 0x20) return `${hex} ${C0_NAMES[code]} (Ctrl-${String.fromCharCode(code + 64)})`;
  if (code === 0x7f) return `${hex} DELETE`;
  return `${hex} C1 CONTROL`;
}

/** Control characters no command may hold: C0 except LF and TAB, DEL, and C1. */
const FORBIDDEN_IN_COMMAND = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

/** The first forbidden control character of `text` and its 0-based index, or undefined. */
export function firstControl(
  text: string,
  forbidden: RegExp = FORBIDDEN_IN_COMMAND,
): { char: string; index: number } | undefined {
  const m = forbidden.exec(text);
  return m ? { char: m[0], index: m.index } : undefined;
}

/**
 * Why a command line (`terminal.exec`, a worker's command line, a line completed at the prompt) is refused
 * for its control characters, or undefined. `what` names the input in the message.
 */
export function controlProblem(text: string, what = 'the command'): string | undefined {
  const hit = firstControl(text);
  if (!hit) return undefined;
  return (
    `${what} holds the control character ${describeChar(hit.char)} at position ${hit.index} (0-based); ` +
    `the terminal and readline act on it before bash parses the line, so what would run is not what was ` +
    `checked. Remove it: send commands as plain text, with only newlines and tabs.`
  );
}
