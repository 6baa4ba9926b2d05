/**
 * @module
 * The keys and JWTs of skein's bus identities (NATS operator mode): an
 * operator with a signing key, a system account, the application account
 * `SKEIN` with a signing key, and users minted on the fly. Kept in
 * `<data>/auth/` (dir 0700, files 0600). An agent's users are recorded so
 * that revoking the agent revokes every credential it was given.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeAccount, encodeOperator, encodeUser, fmtCreds, type KeyPair, type Permissions } from '@nats-io/jwt';
import * as z from 'zod';
import { createFast, fastFromSeed } from './fast-keys.ts';
import { withFileLock, writeFileAtomic } from './keys-file.ts';
import { ownerGone, processOwner } from './process-owner.ts';
import { AGENT_MAX_SUBS, agentPermissions, browserPermissions, operatorPermissions } from './permissions.ts';

const Stored = z.object({
  operator: z.string(),
  operatorSigning: z.string(),
  system: z.string(),
  account: z.string(),
  accountSigning: z.string(),
  /** agentId → public keys of every user minted for it. */
  issued: z.record(z.string(), z.array(z.string())).default({}),
  /** user public key → unix seconds: users issued at or before are refused. */
  revocations: z.record(z.string(), z.number()).default({}),
  /** Agents whose credentials were revoked: no new user is minted for them. */
  finished: z.array(z.string()).default([]),
  /**
   * Web console users not yet revoked: public key → the process that handed it out and when it expires. A console
   * revokes its own when it stops; one that did not stop (SIGKILL, a crash) left them valid for 12 hours, so the
   * next broker start or console revokes those whose process is gone (`orphanedConsoleUsers`).
   */
  consoles: z
    .record(z.string(), z.object({ pid: z.number().int(), owner: z.string().optional(), exp: z.number() }))
    .default({}),
});
type Stored = z.infer<typeof Stored>;

export type Minted = { agentId: string; userPub: string; jwt: string; seed: string; creds: string };

const ACCOUNT_LIMITS = {
  subs: -1,
  conn: -1,
  leaf: -1,
  imports: -1,
  exports: -1,
  data: -1,
  payload: -1,
  wildcards: true,
  mem_storage: -1,
  disk_storage: -1,
  streams: -1,
  consumer: -1,
};

/** User JWTs of agents expire so revocation lists can be pruned; a live worker's run is far shorter. */
export const AGENT_TTL_S = 7 * 24 * 3600;
/** A console's credential lasts a working day; reopening `skein ui` mints a fresh one. */
const BROWSER_TTL_S = 12 * 3600;

export class Authority {
  readonly dir: string;
  #stored: Stored;
  readonly #keys: { operator: KeyPair; operatorSigning: KeyPair; system: KeyPair; account: KeyPair; signing: KeyPair };

  private constructor(dir: string, stored: Stored) {
    this.dir = dir;
    this.#stored = stored;
    // node:crypto Ed25519: stock nkeys signs in pure JS at ~17 ms a signature (fast-keys.ts).
    const kp = (seed: string) => fastFromSeed(seed);
    this.#keys = {
      operator: kp(stored.operator),
      operatorSigning: kp(stored.operatorSigning),
      system: kp(stored.system),
      account: kp(stored.account),
      signing: kp(stored.accountSigning),
    };
  }

  /** Loads `<dir>/keys.json`, or creates fresh keys there (0600) when there is none. */
  static openOrCreate(dir: string): Authority {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    const stored = Authority.#load(dir);
    if (stored) return new Authority(dir, stored);
    const seed = (kp: KeyPair) => new TextDecoder().decode(kp.getSeed());
    const authority = new Authority(dir, {
      operator: seed(createFast('operator')),
      operatorSigning: seed(createFast('operator')),
      system: seed(createFast('account')),
      account: seed(createFast('account')),
      accountSigning: seed(createFast('account')),
      issued: {},
      revocations: {},
      finished: [],
      consoles: {},
    });
    authority.#save();
    return authority;
  }

  /** Opens existing keys only (the CLI's `skein creds`); undefined when the dir has none. */
  static open(dir: string): Authority | undefined {
    const stored = Authority.#load(dir);
    return stored ? new Authority(dir, stored) : undefined;
  }

  static #load(dir: string): Stored | undefined {
    const path = join(dir, 'keys.json');
    if (existsSync(path)) {
      let raw: unknown;
      try {
        raw = JSON.parse(readFileSync(path, 'utf8'));
      } catch (err) {
        throw new Error(`${path} is not valid JSON (${(err as Error).message}); restore it from a backup`);
      }
      const parsed = Stored.safeParse(raw);
      if (!parsed.success) {
        throw new Error(`${path} does not hold skein's bus keys (${parsed.error.message}); restore it from a backup`);
      }
      return parsed.data;
    }
    return undefined;
  }

  /**
   * Re-reads what another process (the CLI's `skein creds`) recorded, so that a save here never drops
   * a user it minted: revocation must reach every credential of an agent.
   */
  #refresh(): void {
    const latest = Authority.#load(this.dir);
    if (latest) this.#stored = latest;
  }

  get systemAccount(): string {
    return this.#keys.system.getPublicKey();
  }

  get account(): string {
    return this.#keys.account.getPublicKey();
  }

  operatorJwt(): Promise<string> {
    return encodeOperator('skein', this.#keys.operator, {
      system_account: this.systemAccount,
      signing_keys: [this.#keys.operatorSigning.getPublicKey()],
    });
  }

  systemAccountJwt(): Promise<string> {
    return encodeAccount(
      'SYS',
      this.#keys.system,
      { limits: { subs: -1, conn: -1, leaf: -1, imports: -1, exports: -1, data: -1, payload: -1, wildcards: true } },
      { signer: this.#keys.operatorSigning },
    );
  }

  /** The application account with the current revocation list, signed by the operator signing key. */
  accountJwt(): Promise<string> {
    return encodeAccount(
      'SKEIN',
      this.#keys.account,
      {
        limits: ACCOUNT_LIMITS,
        signing_keys: [this.#keys.signing.getPublicKey()],
        revocations: { ...this.#stored.revocations },
      },
      { signer: this.#keys.operatorSigning },
    );
  }

  /** The application account's signing key, encoded (`SA…`): whoever holds it mints users (networked mode). */
  accountSigningSeed(): string {
    return this.#stored.accountSigning;
  }

  /**
   * A host's user: unrestricted in the application account. Named hosts each get their own
   * (`skein-host-<name>`), so one host's credentials can be told apart in the server's logs and revoked alone.
   */
  hostCreds(name?: string): Promise<string> {
    return this.#mint(
      name ? `skein-host-${name}` : 'skein-host',
      undefined,
      this.#keys.account,
      this.#keys.signing,
    ).then((m) => m.creds);
  }

  /** A system-account user, for pushing account updates ($SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE). */
  systemCreds(): Promise<string> {
    return this.#mint('skein-system', undefined, this.#keys.system, this.#keys.system).then((m) => m.creds);
  }

  /** People and the CLI: see `operatorPermissions`. */
  operatorCreds(): Promise<string> {
    return this.#mint('skein-operator', operatorPermissions(), this.#keys.account, this.#keys.signing).then(
      (m) => m.creds,
    );
  }

  /**
   * The web console (`skein ui`): see `browserPermissions`; expires after `ttlS` (a token exchange mints one).
   * `userPub` is what `revokeUsers` takes when the console that handed it out stops.
   */
  async browserCreds(ttlS = BROWSER_TTL_S): Promise<{ creds: string; userPub: string }> {
    const exp = Math.floor(Date.now() / 1000) + ttlS;
    const minted = await this.#mint('skein-console', browserPermissions(), this.#keys.account, this.#keys.signing, {
      exp,
    });
    // Recorded before it is handed out: a console that dies from here on leaves it for the next start to revoke.
    const owner = processOwner();
    this.#update((stored) => {
      stored.consoles[minted.userPub] = { pid: process.pid, ...(owner ? { owner } : {}), exp };
    });
    return { creds: minted.creds, userPub: minted.userPub };
  }

  /**
   * Console users whose process is gone (`gone`, process-owner.ts) and that have not expired: what a console
   * killed or crashed left valid. Expired ones are dropped from the record.
   */
  orphanedConsoleUsers(gone: (c: { pid: number; owner?: string | undefined }) => boolean = consoleGone): string[] {
    const now = Math.floor(Date.now() / 1000);
    return this.#update((stored) => {
      const orphaned: string[] = [];
      for (const [pub, c] of Object.entries(stored.consoles)) {
        if (c.exp <= now) delete stored.consoles[pub];
        else if (gone(c)) orphaned.push(pub);
      }
      return orphaned;
    });
  }

  /** Puts these users on the account's revocation list; returns the re-signed account JWT to push. */
  async revokeUsers(userPubs: readonly string[]): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    this.#update((stored) => {
      for (const pub of userPubs) {
        stored.revocations[pub] = now;
        delete stored.consoles[pub];
      }
      this.#prune(now);
    });
    return this.accountJwt();
  }

  /** A new user for agent `agentId` with exactly its permissions; recorded so revocation reaches it. */
  async mintAgent(agentId: string): Promise<Minted> {
    this.#refresh();
    if (this.isRevoked(agentId)) {
      throw new Error(`agent '${agentId}' has finished and its credentials are revoked; spawn a new agent instead`);
    }
    const minted = await this.#mint(agentId, agentPermissions(agentId), this.#keys.account, this.#keys.signing, {
      exp: Math.floor(Date.now() / 1000) + AGENT_TTL_S,
      subs: AGENT_MAX_SUBS,
    });
    this.#update((stored) => {
      const users = stored.issued[agentId] ?? [];
      users.push(minted.userPub);
      stored.issued[agentId] = users;
    });
    return { ...minted, agentId };
  }

  /** Agents that hold unrevoked users (for the catch-up at start). */
  agentsWithCreds(): string[] {
    this.#refresh();
    return Object.keys(this.#stored.issued);
  }

  /** Whether `agentId` was revoked (every user it had is on the revocation list). */
  isRevoked(agentId: string): boolean {
    return this.#stored.finished.includes(agentId);
  }

  /**
   * Puts every user of `agentId` on the account's revocation list and marks the agent so no new
   * user is minted for it. Returns the re-signed account JWT to push to the broker.
   */
  async revokeAgent(agentId: string): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    this.#update((stored) => {
      for (const pub of stored.issued[agentId] ?? []) stored.revocations[pub] = now;
      if (!stored.finished.includes(agentId)) stored.finished.push(agentId);
      delete stored.issued[agentId];
      this.#prune(now);
    });
    return this.accountJwt();
  }

  /** Users expire after AGENT_TTL_S; their revocation entries are dead weight after that. */
  #prune(now: number): void {
    for (const [pub, at] of Object.entries(this.#stored.revocations)) {
      if (at + AGENT_TTL_S < now) delete this.#stored.revocations[pub];
    }
  }

  async #mint(
    name: string,
    permissions: Permissions | undefined,
    account: KeyPair,
    signer: KeyPair,
    opts: { exp?: number; subs?: number } = {},
  ): Promise<Omit<Minted, 'agentId'>> {
    return mintUser(name, permissions, account.getPublicKey(), signer, opts);
  }

  #save(): void {
    writeFileAtomic(join(this.dir, 'keys.json'), `${JSON.stringify(this.#stored, null, 2)}\n`);
  }

  /** One change of keys.json: under its lock, on what is stored now, written whole (keys-file.ts). */
  #update<T>(change: (stored: Stored) => T): T {
    return withFileLock(join(this.dir, 'keys.lock'), () => {
      this.#refresh();
      const result = change(this.#stored);
      this.#save();
      return result;
    });
  }
}

/** A new user of `account` signed by `signer` (an account signing key), as a `.creds` text and its parts. */
export async function mintUser(
  name: string,
  permissions: Permissions | undefined,
  account: string,
  signer: KeyPair,
  /** `subs`: the most subscriptions the user may hold at once (nats-server refuses more). */
  opts: { exp?: number; subs?: number } = {},
): Promise<Omit<Minted, 'agentId'>> {
  const user = createFast('user');
  const { subs, ...rest } = opts;
  const claims = { ...(permissions ?? {}), ...(subs !== undefined ? { subs } : {}) };
  const jwt = await encodeUser(name, user, account, claims, { signer, ...rest });
  return {
    userPub: user.getPublicKey(),
    jwt,
    seed: new TextDecoder().decode(user.getSeed()),
    creds: new TextDecoder().decode(fmtCreds(jwt, user)),
  };
}

/** Whether a console user's process has surely ended (process-owner.ts). */
function consoleGone(c: { pid: number; owner?: string | undefined }): boolean {
  return ownerGone(c.pid, c.owner);
}

/** Writes `text` to `path` readable by the owner only (0600), replacing any earlier file atomically. */
export function writePrivate(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text, { mode: 0o600 });
  chmodSync(`${path}.tmp`, 0o600);
  renameSync(`${path}.tmp`, path);
}
