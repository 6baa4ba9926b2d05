/**
 * @module
 * What a write to a terminal amounts to for the policy. At the shell prompt
 * what runs is the line as typed over several writes, not one write alone: the
 * unfinished line is kept per terminal (`PromptLines`) and each write is judged
 * with what came before it. Pure: no I/O, the caller says what the terminal runs.
 */
import { readsLines, typedLines, type TerminalForeground } from './permission-input.ts';

/** What the policy judges for one `terminal_input` call. */
export type JudgedWrite = {
  input: string;
  foreground: TerminalForeground | undefined;
  /** The unfinished line to keep once the write is allowed; undefined: nothing is pending afterwards. */
  rest: string | undefined;
  /** Set when the write is refused outright (a key the line model cannot follow): why, naming the key. */
  refused?: string;
};

/**
 * Judges `data` written to a terminal running `foreground`, after `pending` (earlier unfinished input at the
 * prompt). `canonical`: whether the terminal is in line mode.
 */
export function judgeWrite(
  pending: string,
  data: string,
  foreground: TerminalForeground | undefined,
  canonical: boolean,
): JudgedWrite {
  if (foreground?.kind === 'prompt') {
    const typed = typedLines(pending, data);
    // Keys the line model cannot follow exactly (ESC sequences, tab, Ctrl-W, Ctrl-O…) act as they arrive:
    // the write is refused before any byte reaches the shell, and the pending line stays as it was.
    if (typed.refused) return { input: data, foreground, rest: pending, refused: typed.refused };
    const input = typed.completed.length > 0 ? `${typed.completed.join('\n')}\n${typed.rest}` : data;
    return { input, foreground, rest: typed.rest };
  }
  // An interpreter or a shell keeps an unfinished line until Enter: a write that ends one line and starts
  // another, then a write that ends the second, ran a line that neither write showed whole. The unfinished
  // part is carried, as at the prompt, and judged with what completes it. Its line editor acts on keys as the
  // shell's does (python's readline, node's REPL): `# x\x01\x04\x04` ran `x`, judged and shown as a comment.
  // So its lines are replayed with the same model, and a key it cannot follow refuses the write.
  if (foreground?.kind === 'program' && readsLines(foreground.name)) {
    const typed = typedLines(pending, data, { editor: `${foreground.name}'s line editor`, eof: true });
    if (typed.refused) return { input: data, foreground, rest: pending, refused: typed.refused };
    const input = typed.completed.length > 0 ? `${typed.completed.join('\n')}\n${typed.rest}` : data;
    return { input, foreground, rest: typed.rest };
  }
  // A program that reads lines (or reads nothing, like `ls -R /` still running) leaves typed-ahead lines
  // to the shell once it exits: judge them as shell input. What is typed without Enter stays in the terminal's
  // line: carried, so the write that ends it is judged with it (forgotten, `touch x` then Enter under `sleep`
  // was judged as an empty line). Programs reading keys (vim, less) keep their grant.
  if (foreground?.kind === 'program' && canonical) {
    const text = pending + data;
    const end = Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r'));
    const rest = text.slice(end + 1);
    if (end >= 0) return { input: text, foreground: { kind: 'program', name: 'bash' }, rest };
    return { input: data, foreground, rest };
  }
  return { input: data, foreground, rest: undefined };
}

/** Per terminal: the unfinished line typed by earlier writes, and whether it was typed at the shell prompt. */
export class PromptLines {
  readonly #lines = new Map<string, { line: string; atPrompt: boolean }>();

  /**
   * The unfinished line a write to `terminalId` is judged with, `foreground` reading it. Text typed under a
   * program is no line at the prompt: the rc's drain discards it before the prompt is drawn (every write sets the
   * typeahead mark), so carried there it only refused the honest lines typed next (`ls` after `cat` and Ctrl-D).
   */
  pending(terminalId: string, foreground?: TerminalForeground): string {
    const p = this.#lines.get(terminalId);
    return !p || (foreground?.kind === 'prompt' && !p.atPrompt) ? '' : p.line;
  }

  /** After an allowed write typed with `foreground` reading: keep what is unfinished, or forget the line. */
  settle(terminalId: string, rest: string | undefined, foreground?: TerminalForeground): void {
    if (rest === undefined) this.#lines.delete(terminalId);
    else this.#lines.set(terminalId, { line: rest, atPrompt: foreground?.kind === 'prompt' });
  }

  /** An exec clears the prompt line before it types its command: nothing typed earlier is pending. */
  clear(terminalId: string): void {
    this.#lines.delete(terminalId);
  }
}
