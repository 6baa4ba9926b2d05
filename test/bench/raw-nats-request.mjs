// The raw baseline of the cli bench: one NATS request from a fresh Node process with nats.js alone (connect
// with a .creds file as any NATS program would, request, print the reply, close). Plain JS, so nothing is
// transpiled: the same start-up work as `skein call` minus skein's own code.
// Usage: node raw-nats-request.mjs <url> <creds file> <subject> <json body>
import { readFileSync } from 'node:fs';
import { connect, credsAuthenticator } from '@nats-io/transport-node';

const [url, credsPath, subject, body] = process.argv.slice(2);
const nc = await connect({ servers: url, authenticator: credsAuthenticator(readFileSync(credsPath)) });
const reply = await nc.request(subject, body, { timeout: 10_000 });
process.stdout.write(`${reply.string()}\n`);
await nc.close();
