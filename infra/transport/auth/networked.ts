/**
 * @module
 * Networked mode with identities, for an existing NATS deployment:
 * `skein auth init` writes what its operator installs (the operator, account
 * and system JWTs and a server config snippet) and what the host is given
 * (`host.creds` and the account signing key `account.nk`, both 0600);
 * `skein up --nats <url> --creds host.creds --signing-key account.nk` then
 * mints every agent's user JWT with that signing key, with the same
 * permissions as the private broker (`permissions.ts`). When the operator
 * keys (`keys.json`) sit beside the signing key, the host also revokes a
 * finished agent's users through the system account.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { decode, type User } from '@nats-io/jwt';
import { connect, credsAuthenticator } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { pushAccount } from './broker.ts';
import { serverList } from '../nats-bus.ts';
import { AGENT_TTL_S, Authority, mintUser, writePrivate } from './authority.ts';
import { fastFromSeed } from './fast-keys.ts';
import { AGENT_MAX_SUBS, agentPermissions, operatorPermissions } from './permissions.ts';
import { serverConfig } from './server-config.ts';
import { HostName } from '../../../schemas/hosts.ts';

/** The files `skein auth init` writes, by role. */
export type AuthInitFiles = {
  operatorJwt: string;
  accountJwt: string;
  systemJwt: string;
  signingKey: string;
  hostCreds: string;
  /** Named hosts given to `--host`: host name → its own `host-<name>.creds`. */
  namedHostCreds: Record<string, string>;
  serverConfig: string;
};

/**
 * Writes (or rewrites from the same keys) the files of `dir`; every file 0600, the dir 0700. `hosts`: named
 * hosts that each get their own creds file (`host-<name>.creds`, user `skein-host-<name>`).
 */
export async function authInit(dir: string, hosts: readonly string[] = []): Promise<AuthInitFiles> {
  for (const name of hosts) {
    const parsed = HostName.safeParse(name);
    if (!parsed.success) {
      throw new Error(`--host '${name}' is not a valid host name: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    }
  }
  const authority = Authority.openOrCreate(dir);
  const resolverDir = join(dir, 'resolver');
  mkdirSync(resolverDir, { recursive: true, mode: 0o700 });
  const files: AuthInitFiles = {
    operatorJwt: join(dir, 'operator.jwt'),
    accountJwt: join(dir, 'account.jwt'),
    systemJwt: join(dir, 'system.jwt'),
    signingKey: join(dir, 'account.nk'),
    hostCreds: join(dir, 'host.creds'),
    namedHostCreds: Object.fromEntries(hosts.map((name) => [name, join(dir, `host-${name}.creds`)])),
    serverConfig: join(dir, 'nats-server.conf'),
  };
  const operatorJwt = await authority.operatorJwt();
  const accountJwt = await authority.accountJwt();
  const systemJwt = await authority.systemAccountJwt();
  writePrivate(files.operatorJwt, `${operatorJwt}\n`);
  writePrivate(files.accountJwt, `${accountJwt}\n`);
  writePrivate(files.systemJwt, `${systemJwt}\n`);
  writePrivate(files.signingKey, `${authority.accountSigningSeed()}\n`);
  writePrivate(files.hostCreds, await authority.hostCreds());
  for (const [name, path] of Object.entries(files.namedHostCreds)) writePrivate(path, await authority.hostCreds(name));
  writePrivate(
    files.serverConfig,
    serverConfig({
      operatorJwt,
      systemAccount: authority.systemAccount,
      accounts: { [authority.systemAccount]: systemJwt, [authority.account]: accountJwt },
      resolverDir,
    }),
  );
  return files;
}

export type NetworkedIdentities = {
  /** The host's own creds (unrestricted in the account). */
  hostCreds: string;
  /** A new user for `agentId` with exactly its permissions, as `.creds` text. */
  mintAgent(agentId: string): Promise<string>;
  /**
   * Present when the keys of `skein auth init` (`keys.json`) sit beside the signing key: the host can then
   * re-sign the account and push revocations through the system account, as the private broker does.
   */
  revoker?: { authority: Authority; revoke(agentId: string): Promise<void>; close(): Promise<void> } | undefined;
};

/**
 * Reads the host's creds and the signing key for `skein up --creds … --signing-key …`, and writes the
 * operator creds the CLI on this machine uses (`<data>/auth/operator.creds`, 0600).
 */
export async function openNetworkedIdentities(options: {
  natsUrl: string;
  credsPath: string;
  signingKeyPath: string;
  dataDir: string;
  logger: Logger;
}): Promise<NetworkedIdentities> {
  const hostCreds = readRequired(options.credsPath, '--creds');
  const jwt = /-----BEGIN NATS USER JWT-----\s*(\S+)\s*------END NATS USER JWT------/.exec(hostCreds)?.[1];
  if (!jwt)
    throw new Error(`--creds ${options.credsPath} holds no NATS user JWT; pass the host.creds of skein auth init`);
  const claims = decode<User>(jwt);
  const account = claims.nats.issuer_account ?? claims.iss;
  let signer: ReturnType<typeof fastFromSeed>;
  try {
    signer = fastFromSeed(readRequired(options.signingKeyPath, '--signing-key').trim());
  } catch (err) {
    throw new Error(
      `--signing-key ${options.signingKeyPath} is not an account signing key (${(err as Error).message}); ` +
        'pass the account.nk of skein auth init',
    );
  }
  if (!signer.getPublicKey().startsWith('A')) {
    throw new Error(`--signing-key ${options.signingKeyPath} is not an account key (it should hold SA…)`);
  }
  const authDir = join(options.dataDir, 'auth');
  mkdirSync(authDir, { recursive: true, mode: 0o700 });
  const operator = await mintUser('skein-operator', operatorPermissions(), account, signer);
  writePrivate(join(authDir, 'operator.creds'), operator.creds);
  const authority = Authority.open(dirname(options.signingKeyPath));
  if (
    authority &&
    authority.account === account &&
    authority.accountSigningSeed() === new TextDecoder().decode(signer.getSeed())
  ) {
    const sys = await connect({
      servers: serverList(options.natsUrl),
      name: 'skein-system',
      authenticator: credsAuthenticator(new TextEncoder().encode(await authority.systemCreds())),
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    return {
      hostCreds,
      mintAgent: async (agentId) => (await authority.mintAgent(agentId)).creds,
      revoker: {
        authority,
        async revoke(agentId) {
          await pushAccount(sys, authority.account, await authority.revokeAgent(agentId));
          options.logger.info({ agentId }, 'agent credentials revoked');
        },
        close: () => sys.drain().catch(() => sys.close()),
      },
    };
  }
  options.logger.warn(
    { signingKey: options.signingKeyPath },
    "no operator keys (keys.json of skein auth init) beside the signing key: finished agents' credentials " +
      'cannot be revoked and stay valid, confined to their agent, until they expire (7 days)',
  );
  return {
    hostCreds,
    mintAgent: async (agentId) =>
      (
        await mintUser(agentId, agentPermissions(agentId), account, signer, {
          exp: Math.floor(Date.now() / 1000) + AGENT_TTL_S,
          subs: AGENT_MAX_SUBS,
        })
      ).creds,
  };
}

function readRequired(path: string, flag: string): string {
  if (!existsSync(path)) throw new Error(`${flag} ${path} does not exist; write it with \`skein auth init\``);
  return readFileSync(path, 'utf8');
}
