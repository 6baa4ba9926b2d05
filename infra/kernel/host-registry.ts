/**
 * @module
 * The registry of named hosts: one record per host in the JetStream KV
 * bucket SKEIN_HOSTS (key = host name), refreshed every `hosts.heartbeatMs`
 * and marked `stopped` on a clean stop. Every host reads the bucket each heartbeat, so
 * liveness is judged from memory (machines/hosts/liveness.ts), never by a
 * request per command: a host is live while its record's revision keeps
 * changing, timed on this host's monotonic clock (the writers' clocks are
 * never compared with this one's).
 */
import { hostname } from 'node:os';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { isAlive } from '../transport/nats-server.ts';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { hostStatus, sight, type HostStatus, type Sighting } from '../../machines/hosts/liveness.ts';
import { HOSTS_BUCKET, HostRecord, type HostsConfig } from '../../schemas/index.ts';

export type RegistryOptions = {
  nc: NatsConnection;
  name: string;
  hostId: string;
  workspace: string;
  config: HostsConfig;
  replicas: number;
  logger: Logger;
  /** The wall clock written into this host's record (`startedAt`, `heartbeatAt`): shown, never judged. */
  now?: () => number;
  /** The monotonic clock liveness is timed with (ms). */
  monotonic?: () => number;
};

export class HostNameTakenError extends Error {
  override name = 'HostNameTakenError';
}

export class HostRegistry {
  readonly name: string;
  readonly #o: RegistryOptions;
  readonly #kv: KV;
  readonly #listKeys: () => Promise<string[]>;
  readonly #records = new Map<string, HostRecord>();
  /** Per host: its record's last revision and when (monotonic) this host saw it change. */
  readonly #sightings = new Map<string, Sighting>();
  readonly #now: () => number;
  readonly #mono: () => number;
  #timer: NodeJS.Timeout | undefined;
  /**
   * When (monotonic) the records were last read: liveness is judged as of then, never past what this host
   * could see.
   */
  #freshAt = 0;
  #record: HostRecord;

  private constructor(options: RegistryOptions, kv: KV, listKeys: () => Promise<string[]>) {
    this.#o = options;
    this.name = options.name;
    this.#kv = kv;
    this.#listKeys = listKeys;
    this.#now = options.now ?? Date.now;
    this.#mono = options.monotonic ?? (() => performance.now());
    this.#record = {
      name: options.name,
      hostId: options.hostId,
      pid: process.pid,
      machine: hostname(),
      workspace: options.workspace,
      startedAt: new Date(this.#now()).toISOString(),
      heartbeatAt: this.#now(),
      state: 'up',
    };
  }

  /** Opens (or creates) the bucket and loads every record; `join()` then announces this host. */
  static async open(options: RegistryOptions): Promise<HostRegistry> {
    const kvm = new Kvm(options.nc);
    const kv = await kvm
      .open(HOSTS_BUCKET)
      .then(async (kv) => (await kv.status(), kv))
      .catch(() =>
        kvm.create(HOSTS_BUCKET, { history: 1, replicas: options.replicas }).catch(async (err: unknown) => {
          // Two hosts starting at once: the other made the bucket between this one's open and its create (the
          // broker then refuses a second stream on its subjects). Open what it made; else the create's error.
          const made = await kvm.open(HOSTS_BUCKET).catch(() => {
            throw err;
          });
          await made.status();
          return made;
        }),
      );
    // The keys from the stream's subject counts: one request with a timeout. `kv.keys()` runs a push consumer,
    // which under load could stall and never end (a host's start then hung in `open` for over a minute).
    const jsm = await jetstreamManager(options.nc);
    const prefix = `$KV.${HOSTS_BUCKET}.`;
    const listKeys = async () => {
      const info = await jsm.streams.info(`KV_${HOSTS_BUCKET}`, { subjects_filter: `${prefix}>` });
      return Object.keys(info.state.subjects ?? {}).map((subject) => subject.slice(prefix.length));
    };
    const registry = new HostRegistry(options, kv, listKeys);
    const own = await kv.get(options.name).catch(() => null);
    const parsed = own?.operation === 'PUT' ? HostRecord.safeParse(own.json()) : undefined;
    if (own && parsed?.success) registry.#saw(options.name, parsed.data, own.revision);
    await registry.#refresh();
    return registry;
  }

  /**
   * Announces this host and starts its heartbeat. Refuses a name another live process holds: two hosts
   * answering for the same agents would be a split.
   */
  async join(): Promise<void> {
    const held = this.#records.get(this.name);
    // The same machine and a dead pid: that process was killed, and this is its restart.
    const dead = held?.machine === hostname() && held.pid !== process.pid && !isAlive(held.pid);
    if (held && held.state === 'up' && held.hostId !== this.#record.hostId && !dead) await this.#waitForSilence(held);
    await this.#beat();
    // One beat and one read at a time: while the broker is slow (each request can take its whole timeout), a
    // tick that finds the last one still running skips it rather than piling requests up.
    let beating: Promise<void> | undefined;
    let reading: Promise<void> | undefined;
    this.#timer = setInterval(() => {
      beating ??= this.#beat()
        .catch((err) => this.#o.logger.warn({ err }, 'host heartbeat not written'))
        .finally(() => (beating = undefined));
      reading ??= this.#refresh()
        .catch((err) => this.#o.logger.warn({ err }, 'host registry not read'))
        .finally(() => (reading = undefined));
    }, this.#o.config.heartbeatMs);
    this.#timer.unref();
  }

  /**
   * Another process holds the name and did not leave cleanly. No clock says whether it is alive, so watch its
   * record: a revision change within `lostAfterMs` means it heart-beats (refused); none means it is gone.
   */
  async #waitForSilence(held: HostRecord): Promise<void> {
    const first = this.#sightings.get(this.name)!;
    const { heartbeatMs, lostAfterMs } = this.#o.config;
    while (this.#mono() - first.changedAtMs < lostAfterMs) {
      await new Promise((r) => setTimeout(r, Math.min(heartbeatMs, 250)));
      const entry = await this.#kv.get(this.name);
      if (entry?.operation === 'PUT' && entry.revision !== first.revision) {
        const machine = held.machine ?? 'an unknown machine';
        const ago = ((this.#mono() - first.changedAtMs) / 1000).toFixed(1);
        throw new HostNameTakenError(
          `host name '${this.name}' is taken by a live host (pid ${held.pid} on ${machine}, workspace ` +
            `${held.workspace}: its record changed ${ago} s ago); choose another --host, or stop that host ` +
            '(a clean stop frees the name at once)',
        );
      }
    }
  }

  async #beat(): Promise<void> {
    this.#record = { ...this.#record, heartbeatAt: this.#now(), state: 'up' };
    const revision = await this.#kv.put(this.name, JSON.stringify(this.#record));
    this.#saw(this.name, this.#record, revision);
  }

  #saw(name: string, record: HostRecord, revision: number): void {
    this.#records.set(name, record);
    this.#sightings.set(name, sight(this.#sightings.get(name), revision, this.#mono()));
  }

  /**
   * Reads every record (one request per host, each heartbeat). Polling rather than a watch: a watch's
   * consumer can die with a cluster node and leave this view stale without a word.
   */
  async #refresh(): Promise<void> {
    for (const key of await this.#listKeys()) {
      if (key === this.name) continue;
      const entry = await this.#kv.get(key);
      if (entry?.operation !== 'PUT') {
        this.#records.delete(key);
        this.#sightings.delete(key);
        continue;
      }
      const parsed = HostRecord.safeParse(entry.json());
      if (parsed.success) this.#saw(key, parsed.data, entry.revision);
      else this.#o.logger.warn({ subject: key }, 'ignored a host record that does not parse');
    }
    this.#freshAt = this.#mono();
  }

  /** A host's liveness as this host sees it now. */
  status(name: string): HostStatus {
    // Another host's silence counts only up to the last time this host could read the registry: a host cut
    // off from the cluster (a node failing over) must not declare the others lost. Its own record is local.
    const now = name === this.name ? this.#mono() : Math.min(this.#mono(), this.#freshAt + this.#o.config.heartbeatMs);
    return hostStatus(this.#records.get(name), this.#sightings.get(name), now, this.#o.config.lostAfterMs);
  }

  /** Where `agent.spawn { host }` may place a child: a live host's workspace, or why not. */
  async target(name: string): Promise<{ workspace: string } | { unavailable: string }> {
    // A host that joined since the last read is not missed: read again before saying no.
    if (this.status(name).status !== 'live') await this.#refresh().catch(() => undefined);
    const record = this.#records.get(name);
    const status = this.status(name);
    if (record && status.status === 'live') return { workspace: record.workspace };
    const live = this.records()
      .filter((r) => this.status(r.name).status === 'live')
      .map((r) => r.name);
    const why =
      status.status === 'lost'
        ? `is lost (no heartbeat for ${(status.silentForMs / 1000).toFixed(1)} s)`
        : status.status === 'stopped'
          ? 'is stopped'
          : 'has never joined';
    return {
      unavailable:
        `host '${name}' ${why}, so no agent can be placed on it; place it on a live host ` +
        `(${live.join(', ') || 'none'}) or start that one (skein up --host ${name} …)`,
    };
  }

  /** The revision of a host's record this host last read: one silence of that host, whatever its clock. */
  revision(name: string): number | undefined {
    return this.#sightings.get(name)?.revision;
  }

  /** The workspace host `name` joined with, whatever its status now; undefined for a host never seen. */
  workspaceOf(name: string): string | undefined {
    return this.#records.get(name)?.workspace;
  }

  /** Every record this host has seen (the ones that left included). */
  records(): HostRecord[] {
    return [...this.#records.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Stops the heartbeat and marks this host stopped (a clean leave is never taken for a loss). */
  async leave(): Promise<void> {
    clearInterval(this.#timer);
    await this.#kv
      .put(this.name, JSON.stringify({ ...this.#record, heartbeatAt: this.#now(), state: 'stopped' }))
      .catch((err: unknown) => this.#o.logger.warn({ err }, 'could not mark this host stopped'));
  }
}
