/**
 * The `env` an agent gives `terminal.open`. A terminal's shell is started through host-side wrappers (the shell
 * helper's setsid and stty, a POSIX sh that joins the cgroups, the sh that loads the seccomp filter, bwrap), all
 * outside the sandbox and, the first ones, outside the agent's cgroups. They were started with the agent's env:
 * an `LD_PRELOAD` of a library the agent built in its workspace ran its code in them, as the runtime's user, with
 * /sys writable (found by a live review: the library wrote its cgroup, the runtime's own, to a host path). The
 * agent's env now reaches the shell alone, set by `env` inside the sandbox. The canary is a host directory the
 * library writes to from any process outside the sandbox (inside, /tmp is the sandbox's own).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { which } from '../../actors/terminal/pty-spawn.ts';
import { call } from '../../infra/transport/client.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { agentSockets, attack, canary, reportAttacks } from './support.ts';

const gcc = which('gcc');
let rt: TestRuntime;
const sockets = agentSockets(() => rt);

beforeAll(async () => {
  rt = await startTestRuntime({ mode: 'embedded', sandbox: 'auto', logLevel: 'warn' });
}, 60_000);
afterAll(async () => {
  await sockets.closeAll();
  await rt?.dispose();
});
reportAttacks('open-env');

/** Spawns `agentId` and opens a terminal as it with `env`; returns the reply and an exec. */
async function openAs(agentId: string, env: Record<string, string>) {
  ok(await rt.call('agent.spawn', { label: agentId, agentId }));
  const bus = await sockets.as(agentId);
  const opened = ok(await call(bus, agentId, 'terminal.open', { env }, { timeoutMs: 30_000 }));
  const terminalId = String(opened['terminalId']);
  const exec = async (command: string) => ok(await call(bus, agentId, 'terminal.exec', { terminalId, command }));
  return { opened, exec };
}

describe('hostile: the env an agent gives terminal.open', { timeout: 120_000 }, () => {
  it('reaches the shell, and not the process the runtime started (the wrappers outside the sandbox)', async () => {
    const { opened, exec } = await openAs('envoy', { SKEIN_PROBE_MARK: 'given', PAGER: 'more' });
    expect(String((await exec('printenv SKEIN_PROBE_MARK PAGER'))['output'])).toMatch(/given\r?\nmore/);
    // The terminal's pid is the outermost process (the cgroup wrapper, then bwrap, by exec): its environment is
    // what it was started with.
    const environ = readFileSync(`/proc/${opened['pid']}/environ`, 'utf8').split('\0');
    expect(environ).toContain('PAGER=cat');
    expect(environ.filter((e) => e.startsWith('SKEIN_PROBE_MARK='))).toEqual([]);
  });

  describe.skipIf(!gcc || !which('bwrap'))('with a library the agent built (gcc and bwrap installed)', () => {
    attack(
      'sandbox',
      'LD_PRELOAD of a library in the workspace runs nothing outside the sandbox',
      async () => {
        const c = canary();
        try {
          const dir = join(c.path, '..', 'escapes');
          mkdirSync(dir);
          const source = join(rt.workspace, 'pre.c');
          writeFileSync(
            source,
            '#include <stdio.h>\n#include <unistd.h>\n' +
              '__attribute__((constructor)) static void pwn(void) {\n' +
              `  char path[512]; snprintf(path, sizeof path, "${dir}/escape-%d", (int)getpid());\n` +
              '  FILE *f = fopen(path, "w"); if (f) { fputs("ran outside the sandbox\\n", f); fclose(f); }\n}\n',
          );
          const library = join(rt.workspace, 'pre.so');
          execFileSync(gcc!, ['-shared', '-fPIC', '-o', library, source]);
          const { exec } = await openAs('preloader', { LD_PRELOAD: library });
          // Inside, the shell and what it runs load it (their own processes): it writes to the sandbox's /tmp.
          expect(String((await exec('echo preloaded'))['output'])).toContain('preloaded');
          expect(readdirSync(dir), 'processes outside the sandbox ran the agent’s library').toEqual([]);
          expect(existsSync(c.path)).toBe(false);
        } finally {
          c.dispose();
        }
      },
      60_000,
    );
  });
});
