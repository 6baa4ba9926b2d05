import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { domainConfig, loadConfig } from '../../../infra/kernel/config.ts';
import { TerminalConfig } from '../../../schemas/terminal.ts';
import { workspaceId } from '../../../infra/kernel/data-dir.ts';
import { tempDir } from '../../support/temp-dir.ts';

describe('loadConfig', () => {
  const dir = tempDir('skein-config-');
  afterAll(() => dir.dispose());

  it('applies defaults, resolving paths against the working dir', () => {
    const state = join(dir.path, 'state');
    const c = loadConfig({ cwd: dir.path, env: { XDG_STATE_HOME: state } });
    expect(c).toMatchObject({
      rootAgentId: 'main',
      mode: 'auto',
      dataDir: join(state, 'skein', workspaceId(dir.path)),
      workspace: dir.path,
      logLevel: 'info',
    });
    expect(c.limits.maxPayloadBytes).toBe(1024 * 1024);
  });

  it('layers file < environment < flags', () => {
    const cwd = join(dir.path, 'layers');
    mkdirSync(join(cwd, '.skein'), { recursive: true });
    writeFileSync(
      join(cwd, '.skein', 'config.json'),
      JSON.stringify({ logLevel: 'debug', rootAgentId: 'boss', limits: { maxPayloadBytes: 4096 } }),
    );
    const c = loadConfig({ cwd, env: { SKEIN_LOG_LEVEL: 'warn' }, flags: { rootAgentId: 'flag' as never } });
    expect(c).toMatchObject({ logLevel: 'warn', rootAgentId: 'flag', configFile: join(cwd, '.skein', 'config.json') });
    expect(c.limits.maxPayloadBytes).toBe(4096);
  });

  it('names the bad key and where it came from', () => {
    const cwd = join(dir.path, 'bad');
    mkdirSync(cwd, { recursive: true });
    writeFileSync(
      join(cwd, 'skein.config.json'),
      JSON.stringify({ limits: { maxPayloadBytes: 'big' }, colour: 'red' }),
    );
    expect(() => loadConfig({ cwd, env: {} })).toThrow(
      /config key 'limits\.maxPayloadBytes' \(from .*skein\.config\.json\).*config key 'colour'/s,
    );
    expect(() => loadConfig({ cwd: dir.path, env: { SKEIN_MODE: 'turbo' } })).toThrow(
      /config key 'mode' \(from the environment\)/,
    );
    expect(() => loadConfig({ cwd: dir.path, env: {}, flags: { rootAgentId: 'a.b' as never } })).toThrow(
      /config key 'rootAgentId' \(from a flag\)/,
    );
  });

  it('passes over a skein.config.json that is a directory (a sandbox placeholder) to .skein/config.json', () => {
    const cwd = join(dir.path, 'placeholder');
    mkdirSync(join(cwd, 'skein.config.json'), { recursive: true });
    expect(loadConfig({ cwd, env: {} }).configFile).toBeUndefined();
    mkdirSync(join(cwd, '.skein'));
    writeFileSync(join(cwd, '.skein', 'config.json'), JSON.stringify({ rootAgentId: 'boss' }));
    expect(loadConfig({ cwd, env: {} })).toMatchObject({
      rootAgentId: 'boss',
      configFile: join(cwd, '.skein', 'config.json'),
    });
  });

  it('says when the file is not JSON', () => {
    const cwd = join(dir.path, 'syntax');
    mkdirSync(cwd, { recursive: true });
    writeFileSync(join(cwd, 'skein.config.json'), '{ nope');
    expect(() => loadConfig({ cwd, env: {} })).toThrow(/is not a JSON object .*fix its syntax/);
  });

  it('a bad domain key names the key, the value form it takes, and where it came from (a flag or the file)', () => {
    const flagged = loadConfig({
      cwd: dir.path,
      env: {},
      flags: { domains: { terminal: { maxMemoryPerAgent: '150%' } } } as never,
    });
    expect(() => domainConfig(flagged, 'terminal', TerminalConfig)).toThrow(
      "config key 'domains.terminal.maxMemoryPerAgent' (from a flag): expected bytes (a whole number, 0: none) " +
        'or a share of memory from "1%" to "100%"',
    );
    const cwd = join(dir.path, 'domain-file');
    mkdirSync(cwd, { recursive: true });
    writeFileSync(
      join(cwd, 'skein.config.json'),
      JSON.stringify({ domains: { terminal: { maxMemoryAllAgents: -1 } } }),
    );
    const filed = loadConfig({ cwd, env: {} });
    expect(() => domainConfig(filed, 'terminal', TerminalConfig)).toThrow(
      `config key 'domains.terminal.maxMemoryAllAgents' (from ${join(cwd, 'skein.config.json')})`,
    );
    // Accepted forms: bytes, a share, 0 for none; the defaults are shares.
    const ok = loadConfig({
      cwd: dir.path,
      env: {},
      flags: { domains: { terminal: { maxMemoryPerAgent: 0, maxMemoryAllAgents: '40%' } } } as never,
    });
    expect(domainConfig(ok, 'terminal', TerminalConfig)).toMatchObject({
      maxMemoryPerAgent: 0,
      maxMemoryAllAgents: '40%',
    });
    expect(domainConfig(loadConfig({ cwd: dir.path, env: {} }), 'terminal', TerminalConfig)).toMatchObject({
      maxMemoryPerAgent: '50%',
      maxMemoryAllAgents: '75%',
    });
  });

  it('an inotify share given as a number is refused as a share, saying to write it as a string', () => {
    for (const [key, value] of [
      ['sandboxInotifyShare', 5],
      ['sandboxInotifyShareAllAgents', 0.5],
    ] as const) {
      const config = loadConfig({
        cwd: dir.path,
        env: {},
        flags: { domains: { terminal: { [key]: value } } } as never,
      });
      const said = 'expected a share from "1%" to "100%", as a string (e.g. "5%")';
      expect(() => domainConfig(config, 'terminal', TerminalConfig)).toThrow(
        `config key 'domains.terminal.${key}' (from a flag): ${said}`,
      );
    }
    const shares = { sandboxInotifyShare: '2%', sandboxInotifyShareAllAgents: '100%' };
    const ok = loadConfig({ cwd: dir.path, env: {}, flags: { domains: { terminal: shares } } as never });
    expect(domainConfig(ok, 'terminal', TerminalConfig)).toMatchObject(shares);
    expect(() =>
      domainConfig(
        loadConfig({
          cwd: dir.path,
          env: {},
          flags: { domains: { terminal: { sandboxInotifyShare: '0%' } } } as never,
        }),
        'terminal',
        TerminalConfig,
      ),
    ).toThrow(`'domains.terminal.sandboxInotifyShare' (from a flag): expected a share from "1%" to "100%" (e.g. "5%")`);
  });
});
