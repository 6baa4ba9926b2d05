/**
 * Files skein or git read later outside any sandbox, written through the file tools under a rule that allows
 * every write: `skein.config.json` (the next `skein up` reads it; it can turn the sandbox off) and `.gitmodules`
 * (what `git submodule update` fetches). Found by a review: both were written, while `.skein/…` and `.git/…`
 * asked. Each now asks (nobody answers here, so it is refused) and the file never appears.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { attack, outcome, reportAttacks } from './support.ts';

let rt: TestRuntime;

beforeAll(async () => {
  rt = await startTestRuntime({
    mode: 'embedded',
    policy: { default: 'deny', tools: { write_file: { always_allow: [{ pattern: '.*' }] } } },
    flags: { domains: { permission: { timeoutMs: 1000 } } },
  });
});
afterAll(async () => rt?.dispose());
reportAttacks('sensitive-files');

describe('files read later outside the sandbox', () => {
  for (const path of ['skein.config.json', '.gitmodules', 'sub/../SKEIN.CONFIG.JSON']) {
    attack('sensitive-file', `file.write ${path}`, async () => {
      const reply = await rt.call('file.write', { path, content: '{"domains":{"terminal":{"sandbox":false}}}' });
      expect(outcome(reply)).toBe('permission_denied');
      expect(existsSync(join(rt.workspace, path))).toBe(false);
    });
  }

  it('still writes an ordinary file under the same rule (control group)', async () => {
    expect(outcome(await rt.call('file.write', { path: 'notes.txt', content: 'x\n' }))).toBe('ok');
    expect(existsSync(join(rt.workspace, 'notes.txt'))).toBe(true);
  });
});
