/**
 * The node:crypto nkey pairs agree with @nats-io/nkeys: same public key and
 * seed encoding from the same seed, signatures each side verifies, and bad
 * seeds refused (property-tested over random seeds; the seed is printed);
 * JWTs decoded and their signatures checked as @nats-io/jwt's decode does.
 */
import fc from 'fast-check';
import { createAccount, createOperator, createUser, fromPublic, fromSeed } from '@nats-io/nkeys';
import { describe, expect, it } from 'vitest';
import { decode, encodeUser, fmtCreds } from '@nats-io/jwt';
import { credsAuthenticator } from '@nats-io/transport-node';
import { decodeJwt, fastCredsAuthenticator, inboxPrefixOf } from '../../../../infra/transport/auth/client-auth.ts';
import { createFast, fastFromSeed } from '../../../../infra/transport/auth/fast-keys.ts';

const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe('fast nkey pairs', () => {
  it('match nkeys for users, accounts and operators, both directions', () => {
    const seed = Date.now();
    console.log(`fast-check seed ${seed}`);
    fc.assert(
      fc.property(
        fc.constantFrom(createUser, createAccount, createOperator),
        fc.uint8Array({ minLength: 1, maxLength: 200 }),
        (create, message) => {
          const stock = create();
          const fast = fastFromSeed(text(stock.getSeed()));
          expect(fast.getPublicKey()).toBe(stock.getPublicKey());
          expect(text(fast.getSeed())).toBe(text(stock.getSeed()));
          expect(text(fast.getPrivateKey())).toBe(text(stock.getPrivateKey()));
          expect(fromPublic(fast.getPublicKey()).verify(message, fast.sign(message))).toBe(true);
          expect(fast.verify(message, stock.sign(message))).toBe(true);
        },
      ),
      { seed, numRuns: 40 },
    );
  });

  it('creates keys nkeys reads, with the role prefix', () => {
    for (const [role, letter] of [
      ['user', 'U'],
      ['account', 'A'],
      ['operator', 'O'],
    ] as const) {
      const fast = createFast(role);
      expect(fast.getPublicKey()[0]).toBe(letter);
      expect(fromSeed(fast.getSeed()).getPublicKey()).toBe(fast.getPublicKey());
    }
  });

  it('refuses a seed with a wrong checksum or a public key', () => {
    const seed = text(createUser().getSeed());
    const flipped = seed.slice(0, 10) + (seed[10] === 'A' ? 'B' : 'A') + seed.slice(11);
    expect(() => fastFromSeed(flipped)).toThrow(/checksum/);
    expect(() => fastFromSeed(createUser().getPublicKey())).toThrow(/not an nkey seed/);
  });

  it("answers a server's nonce exactly as nats.js's credsAuthenticator does", async () => {
    const account = createFast('account');
    const user = createFast('user');
    const jwt = await encodeUser('a', user, account, {}, { signer: account });
    const creds = text(fmtCreds(jwt, user));
    for (const nonce of ['abc', 'x'.repeat(64), undefined]) {
      expect(fastCredsAuthenticator(creds)(nonce)).toEqual(credsAuthenticator(new TextEncoder().encode(creds))(nonce));
    }
    expect(() => fastCredsAuthenticator('nothing')).toThrow(/no NATS user JWT and seed/);
  });

  it("decodes a user JWT as @nats-io/jwt's decode does, refusing one whose claims or signature changed", async () => {
    const account = createFast('account');
    const user = createFast('user');
    const jwt = await encodeUser('a', user, account, { sub: { allow: ['_INBOX_a.>', 'skein.evt.a.>'] } });
    expect(decodeJwt(jwt)).toEqual(decode(jwt));
    expect(inboxPrefixOf(text(fmtCreds(jwt, user)))).toBe('_INBOX_a');
    const [head, body, sig] = jwt.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, name: 'b' })).toString('base64url');
    const otherSig = (await encodeUser('b', user, account)).split('.')[2];
    for (const bad of [`${head}.${forged}.${sig}`, `${head}.${body}.${otherSig}`]) {
      expect(() => decode(bad)).toThrow('sig verification failed');
      expect(() => decodeJwt(bad)).toThrow('sig verification failed');
    }
    expect(() => decodeJwt(`${head}.${body}`)).toThrow('invalid jwt - 2 chunks');
    const unsigned = Buffer.from(JSON.stringify({ ...claims, iss: 'nobody' })).toString('base64url');
    expect(() => decodeJwt(`${head}.${unsigned}.${sig}`)).toThrow(/not a public nkey|not an nkey/);
  });
});
