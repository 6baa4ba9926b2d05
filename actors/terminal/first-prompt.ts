/**
 * @module
 * A shell's first prompt, awaited with a deadline. The session settles it from its marks (the first prompt
 * mark) or from its end (the shell exited, the terminal closed); the first outcome stands, and a wait that
 * begins after it gets it at once (before, a prompt or an exit seen before anyone waited was dropped, and
 * the wait ran to its deadline).
 */
import { lastLine } from '../../machines/terminal/terminal-text.ts';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';

export class FirstPrompt {
  #outcome: { error?: Error } | undefined;
  #waiting: Promise<void> | undefined;
  #settle: ((outcome: { error?: Error }) => void) | undefined;

  /**
   * Resolves at the first prompt; rejects with what ended the wait, or with a retryable timeout naming
   * `shellPath` after `timeoutMs` (the deadline of the first call: later calls share its wait).
   */
  wait(timeoutMs: number, shellPath: string): Promise<void> {
    if (this.#outcome) return this.#outcome.error ? Promise.reject(this.#outcome.error) : Promise.resolve();
    this.#waiting ??= new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          this.reject(
            new RuntimeError(
              ErrorCode.Timeout,
              `Shell '${shellPath}' showed no prompt within ${timeoutMs} ms; check the shell and the sandbox ` +
                'settings.',
              { retryable: true },
            ),
          ),
        timeoutMs,
      );
      this.#settle = (outcome) => {
        clearTimeout(timer);
        if (outcome.error) reject(outcome.error);
        else resolve();
      };
    });
    return this.#waiting;
  }

  /** The shell showed its first prompt. */
  resolve(): void {
    this.#end({});
  }

  /** The wait ends with `error` (the shell exited or the terminal closed first); no-op once settled. */
  reject(error: Error): void {
    this.#end({ error });
  }

  #end(outcome: { error?: Error }): void {
    if (this.#outcome) return;
    this.#outcome = outcome;
    this.#settle?.(outcome);
  }
}

/**
 * Why a shell that exited before its first prompt did: its exit code and the last line it printed (`printed`, the
 * raw output), such as bwrap's refusal to set the sandbox up.
 */
export function exitedBeforePrompt(shellPath: string, exitCode: number, printed: string): RuntimeError {
  const said = lastLine(printed);
  return new RuntimeError(
    ErrorCode.Unavailable,
    `Shell '${shellPath}' exited (code ${exitCode}) before showing a prompt` +
      `${said ? `, after printing ${JSON.stringify(said)}` : ''}; check the shell, cwd and sandbox settings.`,
  );
}
