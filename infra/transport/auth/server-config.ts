/**
 * @module
 * The nats-server configuration for operator mode, written by skein itself
 * (no `nsc`). The `full` resolver keeps account JWTs in a directory, so a
 * revocation pushed through the system account survives a reload and a
 * restart (the MEMORY resolver re-applies its preload on reload, which
 * un-revokes users: see ../shared/research/nats-auth.md).
 */

export type ServerConfigInput = {
  operatorJwt: string;
  systemAccount: string;
  /** account public key → account JWT, preloaded into the resolver. */
  accounts: Record<string, string>;
  resolverDir: string;
  /** Private broker only: a websocket listener for browser clients (address, port and store come as flags). */
  websocket?: { host: string; port: number };
};

/** nats-server config text. Strings are JSON-quoted, which the NATS config parser reads as-is. */
export function serverConfig(input: ServerConfigInput): string {
  const q = JSON.stringify;
  const lines = [
    '# written by skein: operator-mode auth, every client needs credentials',
    `operator: ${q(input.operatorJwt)}`,
    `system_account: ${input.systemAccount}`,
    `resolver: { type: full, dir: ${q(input.resolverDir)}, allow_delete: false, interval: "2m" }`,
    'resolver_preload: {',
    ...Object.entries(input.accounts).map(([pub, jwt]) => `  ${pub}: ${q(jwt)}`),
    '}',
  ];
  // Browser clients: loopback only and the same credentials; put TLS in front before exposing it.
  if (input.websocket) {
    lines.push(`websocket: { host: ${q(input.websocket.host)}, port: ${input.websocket.port}, no_tls: true }`);
  }
  return `${lines.join('\n')}\n`;
}
