/**
 * @module
 * The out-of-process pinger of big-files.bench.ts: a client like any other, connected to the runtime over its
 * socket, in its own process and event loop, so a stalled host shows in its pings whole (the bench's own pings
 * share the host's event loop: a stall delays their sending too, and they understate it). Args: data dir,
 * socket path. Prints `ready` once connected; then per `start` line on stdin pings every 5 ms without waiting
 * for the previous ping (open loop), and on `stop` prints one JSON line, the round-trip times in ms of the pings
 * sent since `start`. Exits on `exit` or when stdin closes.
 */
import { createInterface } from 'node:readline';
import { call } from '../../infra/transport/client.ts';
import { operatorSocket } from '../support/socket.ts';

const [data, socket] = process.argv.slice(2);
const bus = await operatorSocket(data!, socket!);
let timer: NodeJS.Timeout | undefined;
let pings: Promise<number>[] = [];

const ping = () => {
  const t = performance.now();
  return call(bus, 'main', 'runtime.ping', {}, { timeoutMs: 60_000 }).then((r) => {
    if (!r.ok) throw new Error(`ping failed: ${JSON.stringify(r).slice(0, 300)}`);
    return performance.now() - t;
  });
};

process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'start') {
    // One at once, so that even a phase shorter than the interval (the smoke size) has a figure.
    pings = [ping()];
    timer = setInterval(() => pings.push(ping()), 5);
  } else if (line === 'stop') {
    clearInterval(timer);
    process.stdout.write(`${JSON.stringify(await Promise.all(pings))}\n`);
  } else if (line === 'exit') {
    break;
  }
}
clearInterval(timer);
await bus.close();
process.exit(0);
