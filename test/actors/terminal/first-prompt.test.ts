/**
 * The wait for a shell's first prompt: whatever settles it first stands, before or after the wait begins, and
 * the deadline names the shell.
 */
import { FirstPrompt } from '../../../actors/terminal/first-prompt.ts';
import { RuntimeError } from '../../../schemas/errors.ts';

describe('FirstPrompt', () => {
  it('resolves a wait when the prompt comes', async () => {
    const prompt = new FirstPrompt();
    const waited = prompt.wait(5_000, '/bin/bash');
    prompt.resolve();
    await expect(waited).resolves.toBeUndefined();
  });

  it('resolves at once when the prompt came before the wait', async () => {
    const prompt = new FirstPrompt();
    prompt.resolve();
    const t = Date.now();
    await expect(prompt.wait(5_000, '/bin/bash')).resolves.toBeUndefined();
    expect(Date.now() - t).toBeLessThan(1_000);
  });

  it('rejects at once with the exit that came before the wait, not at the deadline', async () => {
    const prompt = new FirstPrompt();
    const exited = new Error('shell exited (code 1) before showing a prompt');
    prompt.reject(exited);
    await expect(prompt.wait(5_000, '/bin/bash')).rejects.toBe(exited);
  });

  it('keeps the first outcome: a close after the prompt changes nothing, a prompt after an exit neither', async () => {
    const shown = new FirstPrompt();
    const waited = shown.wait(5_000, '/bin/bash');
    shown.resolve();
    shown.reject(new Error('closed'));
    await expect(waited).resolves.toBeUndefined();
    await expect(shown.wait(5_000, '/bin/bash')).resolves.toBeUndefined();

    const gone = new FirstPrompt();
    const failed = gone.wait(5_000, '/bin/bash');
    const exited = new Error('exited');
    gone.reject(exited);
    gone.resolve();
    await expect(failed).rejects.toBe(exited);
    await expect(gone.wait(5_000, '/bin/bash')).rejects.toBe(exited);
  });

  it('times out with a retryable error naming the shell, and a later prompt does not undo it', async () => {
    const prompt = new FirstPrompt();
    const err = await prompt.wait(30, '/usr/local/bin/fish').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RuntimeError);
    expect((err as RuntimeError).message).toContain("Shell '/usr/local/bin/fish' showed no prompt within 30 ms");
    expect((err as RuntimeError).retryable).toBe(true);
    prompt.resolve();
    await expect(prompt.wait(30, '/usr/local/bin/fish')).rejects.toBe(err);
  });

  it('gives every waiter the one outcome', async () => {
    const prompt = new FirstPrompt();
    const a = prompt.wait(5_000, '/bin/bash');
    const b = prompt.wait(5_000, '/bin/bash');
    prompt.resolve();
    await expect(Promise.all([a, b])).resolves.toEqual([undefined, undefined]);
  });
});
