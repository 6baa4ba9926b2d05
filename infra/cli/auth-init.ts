/**
 * @module
 * `skein auth init [--out dir]`: the identities for running skein against an
 * existing NATS deployment (networked mode). Writes the operator, account
 * and system JWTs and a nats-server config snippet for the NATS operator,
 * and `host.creds` plus the account signing key `account.nk` for
 * `skein up --nats <url> --creds host.creds --signing-key account.nk`.
 * Running it again rewrites the files from the same keys.
 */
import { resolve } from 'node:path';
import { authInit } from '../transport/auth/networked.ts';
import { action } from './output.ts';
import { clientTarget } from './target.ts';

export async function authInitCommand(opts: { out?: string; data?: string; host?: string[] }): Promise<void> {
  await action(async () => {
    const dir = opts.out ? resolve(opts.out) : `${clientTarget(opts).dataDir}/auth`;
    const files = await authInit(dir, opts.host ?? []);
    const named = Object.entries(files.namedHostCreds);
    process.stdout.write(
      [
        `skein auth init: wrote ${dir} (dir 0700, files 0600)`,
        `  for the NATS operator: ${files.serverConfig} (include it in the server config; it names`,
        `    ${files.operatorJwt}'s operator, the system account and a resolver dir to adjust), and the JWTs`,
        `    ${files.accountJwt}, ${files.systemJwt}`,
        `  for the skein host: ${files.hostCreds} and ${files.signingKey} (keep them secret)`,
        ...named.map(([name, path]) => `  for the named host '${name}': ${path} (and the signing key)`),
        named.length > 0
          ? `next, on each host: skein up --nats <url> --host ${named[0]![0]} --creds ${named[0]![1]} ` +
            `--signing-key ${files.signingKey}`
          : `next: skein up --nats <url> --creds ${files.hostCreds} --signing-key ${files.signingKey}`,
        '',
      ].join('\n'),
    );
    return 0;
  });
}
