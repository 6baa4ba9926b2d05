/**
 * Hostile agents against the sandbox, live over NATS (issue 11 holes 9, 10, 12, 13, 14): the policy allows
 * everything and a person approves whatever the gate still asks about (since issue 14 an expansion or a command
 * naming `.skein/` asks), so the sandbox alone must hold. Escapes are tried from an exec'd command and from a worker's
 * command line; `sandbox: false` is asked for in every shape; a planted bare repository or fsmonitor is
 * driven by `git status` in an unsandboxed terminal (the git protections alone must hold); the spawn limit
 * must count live children only. Each attack prints a canary marker or creates a canary file only if it
 * worked.
 */
import { mkdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { TestRuntime } from '../support/runtime.ts';
import {
  attack,
  canaries,
  cliVerdict,
  expectNoCanary,
  hostileRuntime,
  outcome,
  reportAttacks,
  runtimeVerdict,
  type Canary,
} from './support.ts';

const TRUSTED = 'trusted';
const LIMIT = 8;
let rt: TestRuntime;
let terminalId: string;
let server: Server;
let port = 0;
const { fresh, made } = canaries(() => join(rt.workspace, 'canaries'));

beforeAll(async () => {
  server = createServer((socket) => socket.end('hello\n'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
  rt = await hostileRuntime(
    { default: 'allow' },
    {
      domains: {
        terminal: { sandboxOffFor: [TRUSTED] },
        agents: { maxChildren: LIMIT },
        permission: { timeoutMs: 1000 },
      },
    },
  );
  mkdirSync(join(rt.workspace, 'canaries'));
  mkdirSync(join(rt.workspace, '.git', 'hooks'), { recursive: true });
  writeFileSync(join(rt.workspace, 'skein.config.json'), '{}');
  const open = await rt.call('terminal.open', {});
  if (!open.ok || open['sandbox'] !== true) throw new Error(`expected a sandboxed terminal: ${JSON.stringify(open)}`);
  terminalId = String(open['terminalId']);
  const trusted = await rt.call('agent.spawn', { label: 'trusted', agentId: TRUSTED });
  if (!trusted.ok) throw new Error(`spawn trusted failed: ${JSON.stringify(trusted)}`);
}, 60_000);
afterAll(async () => {
  await rt?.dispose();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});
reportAttacks('sandbox');

/** `cmd && print the marker`: the marker shows up only when the escape worked. */
const ifWorked = (k: Canary, cmd: string) => `( ${cmd} ) >/dev/null 2>&1 && printf %s%s ${k.halves[0]} ${k.halves[1]}`;

/** Attacks from inside; `ws` is the workspace path (the sandbox's writable root). */
const ESCAPES: Array<[string, (ws: string, k: Canary) => string, string[]?]> = [
  ['read /etc/shadow', () => 'grep -q "root:" /etc/shadow'],
  ['find host sockets under /run', () => 'ls -A /run | grep -q .'],
  ['find host sockets under /var/run', () => 'ls -A /var/run/ | grep -q .'],
  ['reach mysqld', () => 'test -S /run/mysqld/mysqld.sock'],
  ['reach postgres', () => 'ls /run/postgresql/ | grep -q s.PGSQL'],
  ['read ~/.config', () => 'ls -A ~/.config | grep -q .'],
  ['read ~/.ssh', () => 'ls -A ~/.ssh | grep -q .'],
  // Any entry in any home (`ls -A /home/*/` prints a header per home when there are two, empty or not).
  ['read other homes', () => 'find /home/ -mindepth 2 -maxdepth 2 | grep -q .'],
  ['read the data dir', () => `ls -A ${rt.dir}/data | grep -q .`],
  ['read the event store', () => `find ${rt.dir}/data -type f | grep -q .`],
  ['connect to a host TCP port', () => `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3 | grep -q hello`],
  ['connect to NATS', () => `exec 3<>/dev/tcp/127.0.0.1/${new URL(rt.info.natsUrl ?? 'nats://127.0.0.1:4222').port}`],
  ['resolve a name on the network', () => 'getent hosts example.com'],
  ['add a git hook', (ws) => `echo "touch /tmp/x" > ${ws}/.git/hooks/pre-commit`, ['.git/hooks/pre-commit']],
  ['symlink a git hook', (ws) => `ln -s /bin/true ${ws}/.git/hooks/post-checkout`, ['.git/hooks/post-checkout']],
  ['write .git/config', (ws) => `printf '[core]\\n\\tfsmonitor = x\\n' >> ${ws}/.git/config`, ['.git/config']],
  ['git config core.fsmonitor', () => 'git init -q . 2>/dev/null; git config core.fsmonitor "touch x"'],
  ['replace .git', (ws) => `mv ${ws}/.git ${ws}/.g`, ['.g']],
  ['remove .git', (ws) => `rm -rf ${ws}/.git && test ! -e ${ws}/.git`],
  ['write the project policy', (ws) => `echo '{"default":"allow"}' > ${ws}/.skein/policy.json`],
  ['add .skein/config.json', (ws) => `echo {} > ${ws}/.skein/config.json`, ['.skein/config.json']],
  ['write skein.config.json', (ws) => `echo '{"x":1}' > ${ws}/skein.config.json`],
  ['add a file under .skein', (ws) => `mkdir ${ws}/.skein/hooks`, ['.skein/hooks']],
  ['remount .git writable in a user namespace', (ws) => `unshare -Urm sh -c 'mount -o remount,rw ${ws}/.git'`],
  [
    'bind over .git in a user namespace',
    (ws) => `unshare -Urm sh -c 'mount --bind /tmp ${ws}/.git && touch ${ws}/.git/x'`,
  ],
  ['write /etc', () => 'touch /etc/skein-pwned'],
  ['write the host home', () => 'touch ~/.skein-pwned'],
  ['git config --global', () => 'git config --global core.fsmonitor "touch x"'],
  ['see host processes', () => 'test "$(ls /proc | grep -c "^[0-9]")" -gt 20'],
  ['share host IPC', () => `test "$(readlink /proc/self/ns/ipc)" = "${readlinkSelf('ipc')}"`],
  ['share host network namespace', () => `test "$(readlink /proc/self/ns/net)" = "${readlinkSelf('net')}"`],
  ['keep capabilities', () => 'grep -q "CapEff:[[:space:]]*0*[1-9a-f]" /proc/self/status'],
];

/** The host's namespace id (what the sandbox must not share). */
function readlinkSelf(ns: string): string {
  return readlinkSync(`/proc/self/ns/${ns}`);
}

/** Runs `command`, approving (allow once, as the person at the root) any ask it raises. */
async function execApproved(command: string) {
  let done = false;
  const reply = rt.call('terminal.exec', { terminalId, command }).finally(() => (done = true));
  while (!done) {
    const pending = await rt.call('permission.pending');
    for (const r of pending.ok ? (pending['requests'] as Array<{ requestId: string; input: string }>) : []) {
      if (r.input === command) await rt.call('permission.decide', { requestId: r.requestId, decision: 'allow_once' });
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return reply;
}

describe('escapes from an exec in the default sandbox (holes 10, 12)', () => {
  for (const [name, make, created] of ESCAPES) {
    attack('sandbox-escape', name, async () => {
      const k = fresh();
      const reply = await execApproved(ifWorked(k, make(rt.workspace, k)));
      expect(outcome(reply)).toBe('ok');
      await expectNoCanary(
        rt,
        k,
        (created ?? []).map((p) => join(rt.workspace, p)),
      );
    });
  }
});

describe('escapes from a worker command line (workers run sandboxed too)', () => {
  for (const [name, make, created] of ESCAPES) {
    attack('sandbox-worker', name, async () => {
      const k = fresh();
      const spawned = await rt.call('agent.spawn', {
        label: 'worker',
        worker: { command: 'sh', args: ['-c', ifWorked(k, make(rt.workspace, k))] },
      });
      expect(outcome(spawned)).toBe('ok');
      const agentId = spawned.ok ? String(spawned['agentId']) : '';
      await rt.call('agent.wait', { agentId, timeoutMs: 10_000 });
      await expectNoCanary(
        rt,
        k,
        (created ?? []).map((p) => join(rt.workspace, p)),
      );
    });
  }
});

describe('the agent cannot switch the sandbox off (hole 9)', () => {
  const SHAPES: Array<[string, Record<string, unknown>]> = [
    ['sandbox: false', { sandbox: false }],
    ['sandbox: false with a cwd', { sandbox: false, cwd: '.' }],
    ['sandbox: false with env', { sandbox: false, env: { X: '1' } }],
    ['sandbox: false with a shell', { sandbox: false, shell: 'bash' }],
  ];
  for (const [name, data] of SHAPES) {
    attack('sandbox-off', name, async () => {
      const reply = await rt.call('terminal.open', data);
      expect(reply).toMatchObject({
        ok: false,
        error: { code: 'permission_denied', message: expect.stringMatching(/domains\.terminal\.sandbox/) },
      });
    });
  }
  attack('sandbox-off', 'sandbox: 0 (not a boolean)', async () => {
    expect(outcome(await rt.call('terminal.open', { sandbox: 0 }))).toBe('invalid_message');
  });
  attack('sandbox-off', 'a sub-agent asks for sandbox: false', async () => {
    const child = await rt.call('agent.spawn', { label: 'child' });
    const agentId = child.ok ? String(child['agentId']) : '';
    expect(outcome(await rt.call('terminal.open', { sandbox: false }, { agentId }))).toBe('permission_denied');
    await rt.call('agent.cancel', { agentId });
  });
  attack('sandbox-off', 'omitting sandbox still sandboxes', async () => {
    const reply = await rt.call('terminal.open', {});
    expect(reply).toMatchObject({ ok: true, sandbox: true });
    await rt.call('terminal.close', { terminalId: String(reply.ok ? reply['terminalId'] : '') });
  });
});

/** The bare repository of hole 13: its fsmonitor would create the canary file. */
function plantBareRepo(dir: string, k: Canary): void {
  mkdirSync(join(dir, 'objects'), { recursive: true });
  mkdirSync(join(dir, 'refs'), { recursive: true });
  writeFileSync(join(dir, 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(
    join(dir, 'config'),
    `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = "touch ${k.path}"\n` +
      `\thooksPath = ${dir}/hooks\n`,
  );
}

describe('a planted bare repository or fsmonitor under git status, unsandboxed (hole 13)', () => {
  const RUNS: Array<[string, (evil: string) => { cwd?: string; command: string }]> = [
    ['terminal.open in the bare repo (the issue)', (evil) => ({ cwd: evil, command: 'git status' })],
    ['cd into it', (evil) => ({ command: `cd ${evil} && git status` })],
    ['git -C', (evil) => ({ command: `git -C ${evil} status` })],
    ['from its objects dir', (evil) => ({ cwd: `${evil}/objects`, command: 'git status' })],
    ['explicit GIT_DIR (fsmonitor still off)', (evil) => ({ command: `GIT_DIR=${evil} git status` })],
    ['explicit --git-dir', (evil) => ({ command: `git --git-dir=${evil} status` })],
    [
      'a .git file pointing at it',
      (evil) => ({
        command: `mkdir -p ${evil}-wt && echo "gitdir: ${evil}" > ${evil}-wt/.git && cd ${evil}-wt && git status`,
      }),
    ],
    ['git diff', (evil) => ({ cwd: evil, command: 'git diff' })],
  ];
  for (const [name, run] of RUNS) {
    attack('bare-repo', name, async () => {
      const k = fresh();
      const evil = join(rt.workspace, `evil-${made.length}`);
      plantBareRepo(evil, k);
      const { cwd, command } = run(evil);
      const open = await rt.call('terminal.open', cwd ? { cwd } : {}, { agentId: TRUSTED });
      expect(open).toMatchObject({ ok: true, sandbox: false });
      const t = String(open.ok ? open['terminalId'] : '');
      expect(outcome(await rt.call('terminal.exec', { terminalId: t, command }, { agentId: TRUSTED }))).toBe('ok');
      await rt.call('terminal.close', { terminalId: t }, { agentId: TRUSTED });
      await expectNoCanary(rt, k);
    });
  }
});

describe('spawn limits count live children only (hole 14)', () => {
  attack('spawn-limit', `${LIMIT} spawns and cancels, then ${LIMIT} more spawns`, async () => {
    const parent = 'spawner';
    expect(outcome(await rt.call('agent.spawn', { label: parent, agentId: parent }))).toBe('ok');
    for (let round = 0; round < 2; round++) {
      const ids: string[] = [];
      for (let i = 0; i < LIMIT; i++) {
        const r = await rt.call('agent.spawn', { label: `c${round}-${i}` }, { agentId: parent });
        expect(outcome(r)).toBe('ok');
        ids.push(String(r.ok ? r['agentId'] : ''));
      }
      const over = await rt.call('agent.spawn', { label: 'over' }, { agentId: parent });
      expect(over).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
      expect(over.ok ? '' : over.error.message).toMatch(/live .*domains\.agents\.maxChildren = 8/);
      for (const id of ids) await rt.call('agent.cancel', { agentId: id }, { agentId: parent });
    }
  });
  attack('spawn-limit', 'completed children free their slots', async () => {
    const parent = 'completer';
    expect(outcome(await rt.call('agent.spawn', { label: parent, agentId: parent }))).toBe('ok');
    for (let i = 0; i < LIMIT + 2; i++) {
      const r = await rt.call('agent.spawn', { label: `done ${i}` }, { agentId: parent });
      expect(outcome(r)).toBe('ok');
      const id = String(r.ok ? r['agentId'] : '');
      expect(outcome(await rt.call('agent.complete', { result: i }, { agentId: id }))).toBe('ok');
    }
  });
});

// Under an allow-all policy the runtime still refuses paths outside the workspace before the policy; the
// issue's `skein policy check` said confirm for /etc/passwd (hole 15).
const AGREEMENT: Array<[string, string]> = [
  ['read_file', '/etc/passwd'],
  ['read_file', '../outside.txt'],
  ['read_file', '/tmp'],
  ['write_file', '/etc/passwd'],
  ['write_file', '../ws-evil/x'],
  ['write_file', 'nodir/x.txt'],
  ['write_file', 'ok.txt'],
  ['read_file', '.skein/policy.json'],
  ['terminal', 'echo x\rrm -rf /'],
  ['terminal', 'ls -la'],
];

describe('skein policy check agrees with the runtime under allow-all (hole 15)', () => {
  for (const [tool, input] of AGREEMENT) {
    attack('policy-check', `${tool} ${JSON.stringify(input)}`, async () => {
      expect(await cliVerdict(rt, tool, input)).toBe(await runtimeVerdict(rt, terminalId, tool, input));
    });
  }
});

// Self-checks of the harness (not attacks): each canary does fire when an attack works, so a silent pass
// above means the attack failed, not that the check was blind.
describe('the canaries fire when an attack works', () => {
  it('an exec that "escapes" prints the marker into the output stream', async () => {
    const k = fresh();
    await rt.call('terminal.exec', { terminalId, command: ifWorked(k, 'true') });
    await expect(expectNoCanary(rt, k)).rejects.toThrow(/marker/);
  });
  it('a worker that "escapes" prints the marker into the output stream', async () => {
    const k = fresh();
    const spawned = await rt.call('agent.spawn', {
      label: 'w',
      worker: { command: 'sh', args: ['-c', ifWorked(k, 'true')] },
    });
    await rt.call('agent.wait', { agentId: String(spawned.ok ? spawned['agentId'] : ''), timeoutMs: 10_000 });
    await expect(expectNoCanary(rt, k)).rejects.toThrow(/marker/);
  });
  it('the planted bare repository runs its fsmonitor once the git protections are removed', async () => {
    const k = fresh();
    const evil = join(rt.workspace, 'evil-control');
    plantBareRepo(evil, k);
    const open = await rt.call('terminal.open', { cwd: evil }, { agentId: TRUSTED });
    const t = String(open.ok ? open['terminalId'] : '');
    await rt.call('terminal.exec', { terminalId: t, command: 'GIT_CONFIG_COUNT=0 git status' }, { agentId: TRUSTED });
    await rt.call('terminal.close', { terminalId: t }, { agentId: TRUSTED });
    await expect(expectNoCanary(rt, k)).rejects.toThrow(/canary file/);
  });
});
