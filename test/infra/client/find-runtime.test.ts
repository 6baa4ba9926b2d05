/**
 * Finding the runtime from a directory inside its workspace, when a sub-agent's workspace holds the empty
 * directories a sandboxed terminal leaves where `.skein` and `skein.config.json` were missing (pty-spawn.ts): they
 * are not a workspace root, so the search goes on up to the runtime's.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findRuntime } from '../../../infra/client/find-runtime.ts';
import { loadConfig } from '../../../infra/kernel/config.ts';
import { tempDir } from '../../support/temp-dir.ts';

describe('findRuntime', () => {
  const dir = tempDir('skein-find-');
  afterAll(() => dir.dispose());

  it('walks past a sub-workspace whose .skein and skein.config.json are sandbox placeholders', () => {
    const root = join(dir.path, 'ws');
    const sub = join(root, 'sub');
    mkdirSync(join(sub, '.skein'), { recursive: true });
    mkdirSync(join(sub, 'skein.config.json'));
    const env = { XDG_STATE_HOME: join(dir.path, 'state') };
    const { dataDir } = loadConfig({ cwd: root, env });
    mkdirSync(dataDir, { recursive: true });
    const info = { pid: process.pid, hostId: 'h', mode: 'embedded', rootAgentId: 'main', workspace: root, dataDir };
    writeFileSync(join(dataDir, 'runtime.json'), JSON.stringify({ ...info, startedAt: new Date().toISOString() }));

    expect(findRuntime({ cwd: sub, env })).toMatchObject({ dir: root, info: { pid: process.pid } });
    // A .skein that holds something is a workspace root of its own: the search stops there.
    writeFileSync(join(sub, '.skein', 'policy.json'), '{}');
    expect(findRuntime({ cwd: sub, env })).toMatchObject({ dir: sub, info: undefined });
  });
});
