/**
 * @module
 * nkey key pairs backed by node:crypto's Ed25519. Stock @nats-io/nkeys signs
 * in pure JS and re-derives the key on every signature (~17 ms each), which
 * made minting one user ~100 ms; these produce the same seeds, public keys
 * and signatures (a test checks against nkeys) in well under a millisecond.
 * Only what @nats-io/jwt's encoders and fmtCreds call is implemented.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import type { KeyPair } from '@nats-io/jwt';

/** nkey prefix bytes (nkeys' `Prefix`). */
export const PREFIX = { seed: 144, operator: 112, account: 0, user: 160 } as const;
type Role = Exclude<keyof typeof PREFIX, 'seed'>;

const PRIVATE = 120;
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function crc16(bytes: Uint8Array): number {
  // CRC-16/XMODEM, as nkeys computes it.
  let crc = 0;
  for (const b of bytes) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

function unbase32(text: string): Uint8Array {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of text) {
    const v = ALPHABET.indexOf(ch);
    if (v < 0) throw new Error(`not an nkey: '${ch}' is not a base32 character`);
    value = (value << 5) | v;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Uint8Array.from(out);
}

function withCrc(body: Uint8Array): string {
  const crc = crc16(body);
  return base32(Uint8Array.from([...body, crc & 0xff, crc >> 8]));
}

class FastKeyPair implements KeyPair {
  readonly #seed: Uint8Array;
  readonly #prefix: number;
  readonly #private: KeyObject;
  readonly #public: string;
  readonly #publicRaw: Uint8Array;
  readonly #publicKey: KeyObject;

  constructor(prefix: number, seed: Uint8Array) {
    this.#prefix = prefix;
    this.#seed = seed;
    this.#private = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
    this.#publicKey = createPublicKey(this.#private);
    this.#publicRaw = Uint8Array.from(this.#publicKey.export({ format: 'der', type: 'spki' }).subarray(-32));
    this.#public = withCrc(Uint8Array.from([prefix, ...this.#publicRaw]));
  }

  getPublicKey(): string {
    return this.#public;
  }

  getSeed(): Uint8Array {
    const b1 = PREFIX.seed | (this.#prefix >> 5);
    const b2 = (this.#prefix & 31) << 3;
    return new TextEncoder().encode(withCrc(Uint8Array.from([b1, b2, ...this.#seed])));
  }

  /** nkeys' encoded private key (`P…`: seed and public key); @nats-io/jwt asks for it to check a signer. */
  getPrivateKey(): Uint8Array {
    return new TextEncoder().encode(withCrc(Uint8Array.from([PRIVATE, ...this.#seed, ...this.#publicRaw])));
  }

  sign(input: Uint8Array): Uint8Array {
    return new Uint8Array(sign(null, input, this.#private));
  }

  verify(input: Uint8Array, sig: Uint8Array): boolean {
    return verify(null, input, this.#publicKey, sig);
  }

  clear(): void {
    this.#seed.fill(0);
  }

  seal(): Uint8Array {
    throw new Error('seal is for curve keys, not used by skein');
  }

  open(): Uint8Array | null {
    throw new Error('open is for curve keys, not used by skein');
  }
}

/** A new random key pair of `role`. */
export function createFast(role: Role): KeyPair {
  const der = generateKeyPairSync('ed25519').privateKey.export({ format: 'der', type: 'pkcs8' });
  return new FastKeyPair(PREFIX[role], Uint8Array.from(der.subarray(-32)));
}

const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');
/** Prefix bytes of public nkeys nkeys' fromPublic accepts (server, cluster, operator, account, user). */
const PUBLIC_PREFIXES = new Set([104, 16, 112, 0, 160]);

/** Verifies signatures by an encoded public nkey (`U…`, `A…`, `O…`); its checksum and prefix are checked. */
export function fastVerifier(encoded: string): (input: Uint8Array, sig: Uint8Array) => boolean {
  const raw = unbase32(encoded);
  const body = raw.subarray(0, raw.length - 2);
  const crc = raw[raw.length - 2]! | (raw[raw.length - 1]! << 8);
  if (raw.length !== 35 || crc16(body) !== crc) throw new Error('not a public nkey: bad length or checksum');
  if (!PUBLIC_PREFIXES.has(body[0]!)) throw new Error(`not a public nkey: it starts with '${encoded[0]}'`);
  const key = createPublicKey({ key: Buffer.concat([SPKI_ED25519, body.subarray(1)]), format: 'der', type: 'spki' });
  return (input, sig) => verify(null, input, key, sig);
}

/** The key pair of an encoded seed (`SU…`, `SA…`, `SO…`); the checksum is verified. */
export function fastFromSeed(encoded: string): KeyPair {
  const raw = unbase32(encoded);
  const body = raw.subarray(0, raw.length - 2);
  const crc = raw[raw.length - 2]! | (raw[raw.length - 1]! << 8);
  if (raw.length !== 36 || crc16(body) !== crc) throw new Error('not an nkey seed: bad length or checksum');
  if ((body[0]! & 0xf8) !== PREFIX.seed) throw new Error('not an nkey seed: it does not start with S');
  const prefix = ((body[0]! & 7) << 5) | ((body[1]! & 0xf8) >> 3);
  return new FastKeyPair(prefix, Uint8Array.from(body.subarray(2)));
}
