/**
 * @module
 * Networked mode with identities, for an existing NATS deployment:
 * `skein auth init` writes what its operator installs (the operator, account
 * and system JWTs and a server config snippet) and what the host is given
 * (`host.creds` and the account signing key `account.nk`, both 0600);
 * `skein up --nats <url> --creds host.creds --signing-key account.nk` then
 * mints every agent's user JWT with that signing key, with the same
 * permissions as the private broker (`permissions.ts`).
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decode, type User } from '@nats-io/jwt';
import { AGENT_TTL_S, Authority, mintUser, writePrivate } from './authority.ts';
import { fastFromSeed } from './fast-keys.ts';
import { agentPermissions, operatorPermissions } from './permissions.ts';
import { serverConfig } from './server-config.ts';

/** The files `skein auth init` writes, by role. */
export type AuthInitFiles = {
  operatorJwt: string;
  accountJwt: string;
  systemJwt: string;
  signingKey: string;
  hostCreds: string;
  serverConfig: string;
};

/** Writes (or rewrites from the same keys) the files of `dir`; every file 0600, the dir 0700. */
export async function authInit(dir: string): Promise<AuthInitFiles> {
  const authority = Authority.openOrCreate(dir);
  const resolverDir = join(dir, 'resolver');
  mkdirSync(resolverDir, { recursive: true, mode: 0o700 });
  const files: AuthInitFiles = {
    operatorJwt: join(dir, 'operator.jwt'),
    accountJwt: join(dir, 'account.jwt'),
    systemJwt: join(dir, 'system.jwt'),
    signingKey: join(dir, 'account.nk'),
    hostCreds: join(dir, 'host.creds'),
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
};

/**
 * Reads the host's creds and the signing key for `skein up --creds … --signing-key …`, and writes the
 * operator creds the CLI on this machine uses (`<data>/auth/operator.creds`, 0600).
 */
export async function openNetworkedIdentities(options: {
  credsPath: string;
  signingKeyPath: string;
  dataDir: string;
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
  return {
    hostCreds,
    mintAgent: async (agentId) =>
      (
        await mintUser(agentId, agentPermissions(agentId), account, signer, {
          exp: Math.floor(Date.now() / 1000) + AGENT_TTL_S,
        })
      ).creds,
  };
}

function readRequired(path: string, flag: string): string {
  if (!existsSync(path)) throw new Error(`${flag} ${path} does not exist; write it with \`skein auth init\``);
  return readFileSync(path, 'utf8');
}
