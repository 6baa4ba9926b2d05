/**
 * @module
 * The bus over a real NATS connection (@nats-io/transport-node 3.3).
 */
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { NoRespondersError, RequestTimeoutError, type Bus, type BusMsg, type Subscription } from './bus.ts';

export class NatsBus implements Bus {
  readonly kind = 'nats' as const;
  readonly nc: NatsConnection;

  constructor(nc: NatsConnection) {
    this.nc = nc;
  }

  /** `auth`: a `.creds` text and, for an agent's creds, its inbox prefix (`auth/permissions.ts`). */
  static async connect(url: string, name = 'skein', auth?: { creds: string; inboxPrefix?: string }): Promise<NatsBus> {
    const nc = await connect({
      servers: url,
      name,
      maxReconnectAttempts: 10,
      reconnectTimeWait: 250,
      ...(auth ? { authenticator: credsAuthenticator(new TextEncoder().encode(auth.creds)) } : {}),
      ...(auth?.inboxPrefix ? { inboxPrefix: auth.inboxPrefix } : {}),
    });
    return new NatsBus(nc);
  }

  publish(subject: string, data: Uint8Array | string): void {
    this.nc.publish(subject, data);
  }

  subscribe(pattern: string, handler: (msg: BusMsg) => void): Subscription {
    const sub = this.nc.subscribe(pattern, {
      callback: (err, msg) => {
        if (err) return;
        handler({
          subject: msg.subject,
          data: msg.data,
          reply: msg.reply,
          respond: (answer) => {
            msg.respond(answer);
          },
        });
      },
    });
    return { unsubscribe: () => sub.unsubscribe() };
  }

  async request(subject: string, data: Uint8Array | string, options: { timeoutMs: number }): Promise<Uint8Array> {
    try {
      const msg = await this.nc.request(subject, data, { timeout: options.timeoutMs });
      return msg.data;
    } catch (err) {
      const text = String((err as Error)?.message ?? err);
      if (/no responders/i.test(text)) throw new NoRespondersError(subject);
      if (/timeout/i.test(text)) throw new RequestTimeoutError(subject, options.timeoutMs);
      throw err;
    }
  }

  async flush(): Promise<void> {
    await this.nc.flush();
  }

  async close(): Promise<void> {
    if (!this.nc.isClosed()) await this.nc.drain().catch(() => this.nc.close());
  }
}
