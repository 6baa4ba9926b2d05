/**
 * `skein schema <type>` (issue 14, friction): one command's or fact's schema, close matches for a typo, and
 * a reader that closes the pipe early (`| head`) ends the command quietly instead of with an EPIPE trace.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { closeMatches } from '../../../infra/cli/schema.ts';
import { cleanEnv, runCli, SKEIN_BIN } from '../../support/cli.ts';

describe('skein schema <type> (real CLI)', () => {
  it('prints only the named command, with its data and reply schemas', async () => {
    const out = await runCli(['schema', 'file.write']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const parsed = JSON.parse(out.stdout) as Record<string, Record<string, unknown>>;
    expect(Object.keys(parsed)).toEqual(['command']);
    expect(parsed['command']?.['type']).toBe('file.write');
    expect(parsed['command']).toHaveProperty('data.properties.path');
    expect(parsed['command']).toHaveProperty('reply');
    expect(out.stdout).not.toContain('agent.spawn');
  });

  it('prints a fact by its type', async () => {
    const out = await runCli(['schema', 'agent.spawned']);
    expect(out.code).toBe(0);
    const parsed = JSON.parse(out.stdout) as Record<string, Record<string, unknown>>;
    expect(Object.keys(parsed)).toEqual(['event']);
    expect(parsed['event']?.['aggregate']).toBeDefined();
  });

  it('an unknown type is a usage error naming it and the close matches, with nothing on stdout', async () => {
    const out = await runCli(['schema', 'file.wrte']);
    expect(out.code).toBe(2);
    expect(out.stdout).toBe('');
    expect(out.stderr).toMatch(/unknown command or fact type 'file\.wrte'; did you mean .*file\.write/);
    const none = await runCli(['schema', 'zzzzzzzzzzzz']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/run `skein schema` \(no type\)/);
  });

  it('ranks close matches: substrings and small typos, not everything', () => {
    const names = ['file.write', 'file.read', 'agent.spawn', 'agent.spawned', 'terminal.open'];
    expect(closeMatches('spawn', names)).toEqual(['agent.spawn', 'agent.spawned']);
    expect(closeMatches('file.wirte', names)).toEqual(['file.write']);
    expect(closeMatches('quux', names)).toEqual([]);
  });

  it('piped into a reader that stops after one line, exits 0 with no stack trace', async () => {
    // The whole schema (~180 KB) is larger than a pipe buffer, so the write meets a closed pipe.
    const child = spawn(
      'bash',
      ['-c', `"${process.execPath}" "${SKEIN_BIN}" schema | head -n 1; exit \${PIPESTATUS[0]}`],
      {
        env: cleanEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(stdout).toBe('{\n');
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
