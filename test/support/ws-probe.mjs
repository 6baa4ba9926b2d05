// Run with `node --experimental-websocket` (Node 20 has no global WebSocket otherwise; wsconnect would hang).
// argv: <ws url> <creds file> <agentId>. Prints JSON lines: the reply to agent.get, then errors seen.
import { readFileSync } from 'node:fs';
import { credsAuthenticator, wsconnect } from '@nats-io/nats-core';

const [url, credsPath, agentId] = process.argv.slice(2);
const nc = await wsconnect({
  servers: url,
  authenticator: credsAuthenticator(readFileSync(credsPath)),
  inboxPrefix: `_INBOX_${agentId}`,
  maxReconnectAttempts: 0,
});
const errors = [];
(async () => {
  for await (const s of nc.status()) if (s.type === 'error') errors.push(String(s.error?.message));
})();
const reply = await nc.request(`skein.cmd.${agentId}.agent.get`, JSON.stringify({ data: {} }), { timeout: 10_000 });
console.log(JSON.stringify({ reply: JSON.parse(new TextDecoder().decode(reply.data)) }));
nc.publish('skein.cmd.main.agent.get', JSON.stringify({ data: {} }));
await nc.flush();
await new Promise((r) => setTimeout(r, 300));
console.log(JSON.stringify({ errors }));
await nc.close();
