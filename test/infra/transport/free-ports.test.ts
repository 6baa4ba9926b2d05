import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePorts, lostPortRace } from '../../../infra/transport/nats-server.ts';

describe('freePorts', () => {
  it('hands out distinct ports in one call, each bindable once it returns', async () => {
    const ports = await freePorts(64);
    expect(ports).toHaveLength(64);
    expect(new Set(ports).size).toBe(64);
    for (const port of ports.slice(0, 4)) {
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve());
      });
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('tells a lost port race from other start failures', () => {
    expect(lostPortRace(new Error('listen tcp 127.0.0.1:32849: bind: address already in use'))).toBe(true);
    expect(lostPortRace(new Error('nats-server exited with code 1: bad config'))).toBe(false);
    expect(lostPortRace(undefined)).toBe(false);
  });
});
