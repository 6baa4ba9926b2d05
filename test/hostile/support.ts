/**
 * @module
 * The hostile-agent suite's shared harness (test/hostile/*.integration.test.ts). Kept tiny on purpose:
 * - `hostileRuntime(policy, flags?)`: a networked runtime (private nats-server) with that project policy;
 * - `attack(cls, name, fn)`: registers one attack as a test and counts it by class; `reportAttacks(file)`
 *   prints the count per class in an `afterAll` (the closing note quotes it);
 * - `agentSockets(rt)`: connections to an embedded runtime as an agent, each with its own socket token;
 * - `canary(rt)`: a file path that must never exist and a marker string that must never appear in the
 *   facts or the terminal output; `expectNoCanary` checks both.
 * Attacks are generated from tables and share one runtime per file, so the suite stays well under 3 minutes.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConfigInput } from '../../schemas/index.ts';
import type { Reply } from '../../infra/transport/codec.ts';
import { ISSUE_11_POLICY } from '../support/permission-fixtures.ts';
import { mintSocketToken, socketKey } from '../../infra/transport/auth/socket-tokens.ts';
import { SocketBus } from '../../infra/transport/socket-bus.ts';
import { startNetworkedRuntime, type TestRuntime } from '../support/runtime.ts';

export { ISSUE_11_POLICY };

/** Everything allowed but `touch`, input included: the deny rule is the limit attacks on the gate try to get around. */
export const ALL_BUT_TOUCH_POLICY = {
  default: 'allow',
  tools: {
    terminal: { always_deny: [{ pattern: '\\btouch\\b' }] },
    terminal_input: { default: 'allow' },
  },
};

/**
 * A networked runtime over a private nats-server with `policy` as the project policy. Terminals get the
 * runtime's own default (sandboxed when bwrap is installed), as an operator who configured nothing would.
 */
export function hostileRuntime(policy: unknown = ISSUE_11_POLICY, flags?: Partial<ConfigInput>): Promise<TestRuntime> {
  return startNetworkedRuntime({ policy, sandbox: 'auto', ...(flags ? { flags } : {}) });
}

/** Opens a terminal as the operator; throws with the reply when it cannot. */
export async function openTerminal(rt: TestRuntime): Promise<string> {
  const open = await rt.call('terminal.open', {});
  if (!open.ok) throw new Error(`terminal.open failed: ${JSON.stringify(open)}`);
  return String(open['terminalId']);
}

const counts = new Map<string, number>();

/** Registers one attack: a vitest `it` named `[class] name`, counted under `cls`. */
export function attack(cls: string, name: string, fn: () => Promise<void>, timeoutMs = 30_000): void {
  counts.set(cls, (counts.get(cls) ?? 0) + 1);
  it(`[${cls}] ${name}`, fn, timeoutMs);
}

/** Logs `hostile <file>: N attacks (class a: n, …)` once the file's attacks have run. */
export function reportAttacks(file: string): void {
  afterAll(() => {
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    const byClass = [...counts.entries()].map(([c, n]) => `${c}: ${n}`).join(', ');
    console.log(`hostile ${file}: ${total} attacks (${byClass})`);
  });
}

export type Canary = {
  /** A path outside the workspace that an attack tries to create; it must never exist. */
  path: string;
  /**
   * A string an attack tries to make appear; it must never be in a fact or in terminal output. Attacks
   * print it only by running code (`printf %s%s <halves>`), so a refused command's text never holds it.
   */
  marker: string;
  /** The marker cut in two, for commands that would print it: `printf %s%s ${halves[0]} ${halves[1]}`. */
  halves: [string, string];
  dispose(): void;
};

let serial = 0;

/**
 * A fresh canary (unique path and marker) in a new directory under `parent` (default: the system temp
 * dir). Attacks through a sandboxed terminal need a parent in the workspace: the sandbox's /tmp is
 * private, so a canary there would stay invisible to the test even when the attack worked.
 */
export function canary(parent: string = tmpdir()): Canary {
  const dir = mkdtempSync(join(parent, 'skein-canary-'));
  const marker = `CANARY${process.pid}x${++serial}x${Math.random().toString(36).slice(2, 8)}`;
  const cut = Math.floor(marker.length / 2);
  const halves: [string, string] = [marker.slice(0, cut), marker.slice(cut)];
  // The path never holds the marker: a refused command that names the path is stored in a fact.
  return { path: join(dir, 'pwned'), marker, halves, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A file's canaries: `fresh()` makes one under `parent()` (read then, once the runtime exists), `made` lists them,
 * and each is removed after the file's attacks.
 */
export function canaries(parent: () => string): { fresh: () => Canary; made: readonly Canary[] } {
  const made: Canary[] = [];
  afterAll(() => {
    for (const c of made) c.dispose();
  });
  return {
    made,
    fresh: () => {
      const c = canary(parent());
      made.push(c);
      return c;
    },
  };
}

/** Every stored fact and output chunk, as text (to look for a marker). */
export async function logText(rt: TestRuntime): Promise<string> {
  const parts: string[] = [];
  for (const stream of ['events', 'output'] as const) {
    await rt.log.scan({ stream }, (f) => parts.push(JSON.stringify(f)));
  }
  return parts.join('\n');
}

/**
 * Fails when the canary file exists or its marker is in the log. `extraPaths` are other files the attack
 * must not have created (e.g. inside the workspace).
 */
export async function expectNoCanary(rt: TestRuntime, c: Canary, extraPaths: string[] = []): Promise<void> {
  for (const p of [c.path, ...extraPaths]) expect(existsSync(p), `canary file ${p} exists`).toBe(false);
  expect((await logText(rt)).includes(c.marker), `marker ${c.marker} appeared in facts or output`).toBe(false);
}

/** The error code of a failed reply, or 'ok'. */
export function outcome(reply: Reply): string {
  return reply.ok ? 'ok' : reply.error.code;
}

/** Polls `check` until true or `ms` pass (for effects that would show up late, like a typed-ahead line). */
export async function settle(ms: number, check: () => boolean = () => false): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end && !check()) await new Promise((r) => setTimeout(r, 25));
}

/** The runtime's verdict for one call: allow (it ran), confirm (it asked a human), or deny. */
export async function runtimeVerdict(
  rt: TestRuntime,
  terminalId: string,
  tool: string,
  input: string,
): Promise<string> {
  const before = await rt.log.lastSeq('events');
  const reply =
    tool === 'terminal'
      ? await rt.call('terminal.exec', { terminalId, command: input, timeoutMs: 10_000 })
      : tool === 'read_file'
        ? await rt.call('file.read', { path: input })
        : await rt.call('file.write', { path: input, content: 'x\n' });
  if (reply.ok) return 'allow';
  let asked = false;
  await rt.log.scan({ stream: 'events', fromSeq: before + 1 }, (f) => {
    if (f.type === 'permission.requested') asked = true;
  });
  return asked ? 'confirm' : 'deny';
}

/** `skein policy check`'s verdict for the same call, with the runtime's project policy and workspace. */
export async function cliVerdict(rt: TestRuntime, tool: string, input: string): Promise<string> {
  const { runPolicyCheck } = await import('../../infra/cli/policy-command.ts');
  const cli = await runPolicyCheck({
    policy: [join(rt.workspace, '.skein', 'policy.json')],
    tool,
    input,
    workspace: rt.workspace,
    json: true,
  });
  return (JSON.parse(cli.stdout) as { outcome: string }).outcome;
}

/**
 * Connections to the embedded runtime `rt()` as agents: `as(agentId)` connects with a socket token minted for
 * that agent alone (what the agent's own process would hold), `closeAll()` closes every one made.
 */
export function agentSockets(rt: () => TestRuntime): {
  as(agentId: string): Promise<SocketBus>;
  closeAll(): Promise<void>;
} {
  const buses: SocketBus[] = [];
  return {
    async as(agentId) {
      const token = mintSocketToken(socketKey(join(rt().dir, 'data')), { kind: 'agent', agentId });
      const bus = await SocketBus.connect(rt().info.socketPath!, { token });
      buses.push(bus);
      return bus;
    },
    async closeAll() {
      for (const b of buses.splice(0)) await b.close().catch(() => undefined);
    },
  };
}

/** What `keepFileScene` sets up: a runtime, a file an attack tries to remove, a canary and one terminal. */
export type KeepFileScene = {
  rt: TestRuntime;
  keep: string;
  c: Canary;
  terminalId: string;
  exec(command: string): Promise<Reply>;
};

/**
 * For a test file: a hostile runtime under `policy` with `keep.txt` in its workspace, a canary in the
 * workspace (terminals are sandboxed, and the sandbox's /tmp is its own) and one terminal, made before the
 * file's tests and torn down after them; `flags` as for hostileRuntime (a short ask timeout for attacks that
 * ask). Read the fields inside tests, not at the top level.
 */
export function keepFileScene(policy: unknown, flags?: Partial<ConfigInput>): KeepFileScene {
  const scene = {
    exec: (command: string) =>
      scene.rt.call('terminal.exec', { terminalId: scene.terminalId, command, timeoutMs: 10_000 }),
  } as KeepFileScene;
  beforeAll(async () => {
    scene.rt = await hostileRuntime(policy, flags);
    scene.keep = join(scene.rt.workspace, 'keep.txt');
    writeFileSync(scene.keep, 'keep\n');
    scene.c = canary(scene.rt.workspace);
    scene.terminalId = await openTerminal(scene.rt);
  }, 60_000);
  afterAll(async () => {
    await scene.rt?.dispose();
    scene.c?.dispose();
  });
  return scene;
}

/** Attacks (class `cls`) each of which must be refused with keep.txt left in place. */
export function keepsFile(scene: KeepFileScene, cls: string, commands: readonly string[]): void {
  for (const command of commands) {
    attack(cls, command, async () => {
      expect(outcome(await scene.exec(command))).toBe('permission_denied');
      expect(existsSync(scene.keep)).toBe(true);
    });
  }
}

/** A control group: each command runs (`ok`) and its output names keep.txt. */
export function stillRuns(scene: KeepFileScene, name: string, commands: readonly string[]): void {
  it(name, async () => {
    for (const command of commands) {
      const reply = await scene.exec(command);
      expect({ command, outcome: outcome(reply) }).toEqual({ command, outcome: 'ok' });
      expect(String(reply.ok ? reply['output'] : '')).toContain('keep.txt');
    }
  }, 60_000);
}

/**
 * The longest the event loop went without running a 10 ms timer while `fn` ran: the host's stall, when the
 * runtime is in this process (`startTestRuntime`, `hostileRuntime`).
 */
export async function stallOf<T>(fn: () => Promise<T>): Promise<{ value: T; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 10);
  try {
    const value = await fn();
    stallMs = Math.max(stallMs, performance.now() - last);
    return { value, stallMs };
  } finally {
    clearInterval(timer);
  }
}
