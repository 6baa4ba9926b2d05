/**
 * Real PTYs: the bubblewrap sandbox (denials) and the resource arbiter
 * (ordering, wait times, release on terminal death).
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { terminalHarness } from '../../support/terminal-harness.ts';

const A = 'a1';

describe('TerminalManager: sandbox', () => {
  let h: ReturnType<typeof terminalHarness>;
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    server = createServer((socket) => socket.end('hello\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    h = terminalHarness({ closeGraceMs: 300 });
  });
  afterEach(async () => {
    await h.dispose();
  });

  const connect = `exec 3<>/dev/tcp/127.0.0.1/PORT && head -1 <&3`;

  it('reaches 127.0.0.1 and writes /tmp without the sandbox (the control case)', async () => {
    const { terminalId } = await h.open();
    expect(await h.manager.exec(A, { terminalId, command: connect.replace('PORT', String(port)) })).toMatchObject({
      exitCode: 0,
      output: 'hello\n',
    });
  });

  it(
    'denies writes outside the workspace and sockets to ' + '127.0.0.1, keeps /tmp private, allows the workspace',
    async () => {
      const o = await h.open(A, { sandbox: true });
      expect(o.sandbox).toBe(true);
      const t = o.terminalId;
      const etc = await h.manager.exec(A, { terminalId: t, command: 'touch /etc/skein-sandbox-probe' });
      expect(etc.exitCode).not.toBe(0);
      expect(etc.output).toMatch(/Read-only file system/);
      expect(existsSync('/etc/skein-sandbox-probe')).toBe(false);
      const net = await h.manager.exec(A, { terminalId: t, command: connect.replace('PORT', String(port)) });
      expect(net.exitCode).not.toBe(0);
      expect(net.output).toMatch(/Network is unreachable|Connection refused|Cannot assign/);
      expect(
        await h.manager.exec(A, {
          terminalId: t,
          command: 'echo inside > ok.txt && echo private > /tmp/skein-private-probe && cat ok.txt',
        }),
      ).toMatchObject({ exitCode: 0, output: 'inside\n' });
      expect(readFileSync(join(h.workspace, 'ok.txt'), 'utf8')).toBe('inside\n');
      expect(existsSync('/tmp/skein-private-probe')).toBe(false);
      const ps = await h.manager.exec(A, {
        terminalId: t,
        command: 'ls /proc | grep -c "^[0-9]"; grep CapEff /proc/self/status',
      });
      expect(Number(ps.output.split('\n')[0])).toBeLessThan(10);
      expect(ps.output).toMatch(/CapEff:\s+0000000000000000/);
      // Shell integration still works inside: cwd, exit codes, input detection.
      expect(await h.manager.exec(A, { terminalId: t, command: 'cd /tmp; (exit 5)' })).toMatchObject({
        exitCode: 5,
        cwd: '/tmp',
      });
      expect(await h.manager.exec(A, { terminalId: t, command: 'sleep 30', timeoutMs: 200 })).toMatchObject({
        status: 'timeout',
        exitCode: 130,
      });
    },
  );

  it('detects input waits and closes cleanly inside the sandbox', async () => {
    const fast = terminalHarness({ closeGraceMs: 300, inputQuietMs: 200, pollMs: 50 });
    try {
      const { terminalId } = await fast.open(A, { sandbox: true });
      expect(await fast.manager.exec(A, { terminalId, command: "read -p 'Name: ' n; echo hi $n" })).toMatchObject({
        status: 'input_required',
        prompt: 'Name:',
      });
      await fast.manager.write(A, { terminalId, data: 'z\n' });
      expect((await fast.manager.wait(A, { terminalId })).output).toBe('Name: z\nhi z\n');
      const members = fast.manager.get(terminalId)!.members();
      await fast.manager.close(A, { terminalId });
      await vi.waitFor(() => expect(members.filter((p) => existsSync(`/proc/${p}`))).toEqual([]));
    } finally {
      await fast.dispose();
    }
  });

  it('says clearly when bubblewrap is missing, and spawns nothing', async () => {
    const nob = terminalHarness({ bwrapPath: 'bwrap-not-installed' });
    try {
      await expect(nob.open(A, { sandbox: true })).rejects.toThrow(
        "Sandbox requested but bubblewrap ('bwrap-not-installed') is not installed; " +
          'install it (apt-get install -y bubblewrap) or open the terminal without "sandbox".',
      );
      expect(nob.manager.size).toBe(0);
    } finally {
      await nob.dispose();
    }
  });
  it('names what bubblewrap said when it refuses to start the sandbox', async () => {
    // A stand-in for a bwrap that cannot set the sandbox up (no user namespaces, a setting it may not write).
    const fake = join(h.workspace, 'refusing-bwrap');
    writeFileSync(fake, '#!/bin/sh\necho "bwrap: Can\'t create file /proc/sys/user/max_inotify_watches" >&2\nexit 1\n');
    chmodSync(fake, 0o755);
    const refused = terminalHarness({ bwrapPath: fake });
    try {
      const said = `after printing "bwrap: Can't create file /proc/sys/user/max_inotify_watches"; check`;
      await expect(refused.open(A, { sandbox: true })).rejects.toThrow(`before showing a prompt, ${said}`);
    } finally {
      await refused.dispose();
    }
  });
});

describe('TerminalManager: resource arbiter', () => {
  let h: ReturnType<typeof terminalHarness>;
  beforeEach(() => {
    h = terminalHarness({ resources: ['gpu', 'port:3000'], agentPriority: { boss: 10 }, closeGraceMs: 300 });
  });
  afterEach(async () => {
    await h.dispose();
  });
  const resourceFacts = () =>
    h.facts
      .filter((f) => f.type.startsWith('resource.'))
      .map((f) => `${f.type.slice(9)} ${f.data.resource} ${f.agentId}`);

  it('gives exclusive use in priority order and reports the wait', async () => {
    const holder = await h.open('w1');
    const low = await h.open('w2');
    const boss = await h.open('boss');
    const first = h.manager.exec('w1', {
      terminalId: holder.terminalId,
      // Holds the gpu until the test has both others waiting (a file it makes), however slow the machine.
      command: 'until [ -e release ]; do sleep 0.05; done; echo held',
      resources: ['gpu'],
    });
    await vi.waitFor(() => expect(resourceFacts()).toEqual(['acquired gpu w1']));
    const second = h.manager.exec('w2', { terminalId: low.terminalId, command: 'echo low', resources: ['gpu'] });
    await vi.waitFor(() => expect(h.types(low.terminalId)).toContain('terminal.command.queued'));
    const third = h.manager.exec('boss', { terminalId: boss.terminalId, command: 'echo boss', resources: ['gpu'] });
    await vi.waitFor(() => expect(h.types(boss.terminalId)).toContain('terminal.command.queued'));
    // Held a while with both waiting: released at once, the holder can finish within the 2 ms its own grant took
    // (CI: the boss's wait read 2 ms, the holder's 2 ms).
    await new Promise((r) => setTimeout(r, 100));
    writeFileSync(join(h.workspace, 'release'), '');
    const [r1, r2, r3] = await Promise.all([first, second, third]);
    expect(r1.output).toBe('held\n');
    expect(r3.resourceWaitMs).toBeGreaterThanOrEqual(100);
    expect(r3.resourceWaitMs).toBeGreaterThan(r1.resourceWaitMs!);
    expect(r2.resourceWaitMs).toBeGreaterThan(r3.resourceWaitMs!);
    expect(r2.output).toBe('low\n');
    expect(resourceFacts()).toEqual([
      'acquired gpu w1',
      'released gpu w1',
      'acquired gpu boss',
      'released gpu boss',
      'acquired gpu w2',
      'released gpu w2',
    ]);
    const queued = h.factsOf(low.terminalId).find((f) => f.type === 'terminal.command.queued')!;
    expect(queued.data).toMatchObject({ resources: ['gpu'], position: 1 });
  });

  it('releases a dead holder: closing its terminal lets the waiter through', async () => {
    const holder = await h.open('w1');
    const waiter = await h.open('w2');
    const held = h.manager
      .exec('w1', { terminalId: holder.terminalId, command: 'sleep 30', resources: ['port:3000'] })
      .catch((err: Error) => err);
    await vi.waitFor(() => expect(resourceFacts()).toEqual(['acquired port:3000 w1']));
    const waiting = h.manager.exec('w2', {
      terminalId: waiter.terminalId,
      command: 'echo mine',
      resources: ['port:3000'],
    });
    await vi.waitFor(() => expect(h.manager.get(holder.terminalId)!.members().length).toBeGreaterThanOrEqual(2));
    await h.manager.close('w1', { terminalId: holder.terminalId });
    expect(await waiting).toMatchObject({ output: 'mine\n' });
    expect(resourceFacts()).toEqual([
      'acquired port:3000 w1',
      'released port:3000 w1',
      'acquired port:3000 w2',
      'released port:3000 w2',
    ]);
    // The holder's command was hung up with its terminal (before the shell, which reports its status).
    expect(await held).toMatchObject({ status: 'exited', exitCode: 129, signal: 'SIGHUP' });
  });
});
