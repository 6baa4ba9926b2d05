/**
 * @module
 * The flood's structural floor (issue 15), in a process of its own as `skein up` is: the least a durable output
 * path does, on the thread that reads the PTY. node-pty reads bash with skein's rc (as the raw round does);
 * reads are joined into chunks of up to PLAIN_CHUNK_BYTES (or 20 ms); each chunk is published to a JetStream
 * stream on file storage (a message id each, acks awaited together) as a fact shaped like
 * `terminal.output.received`. No screen, ring, mark parsing, schema or log guard: what a skein round costs beyond
 * this is skein's own code, and what this costs beyond a raw read is the shape (one thread reading and
 * publishing, a broker, a subscriber) on this machine's cores. In `thread` mode the PTY is read, and its reads
 * joined, on a worker thread, and the main thread only publishes: what moving skein's PTY reads off its event
 * loop could give at most.
 *
 * `node --import tsx flood-floor-child.ts <natsUrl> <rcPath> <subject> [same-thread|thread]`: prints `ready`;
 * for each stdin line `go <command>` types the command and prints `done <bytes published>` once its D mark was
 * read and every chunk acked.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { PLAIN_CHUNK_BYTES } from '../../actors/terminal/terminal-output.ts';
import { MARK_B, MARK_D, rawShell } from './bench-pty.ts';

/** From the reader: a chunk of output, or the typed command's D mark (after its last chunk). */
type FromReader = { chunk: string } | { done: true };

/** bash with skein's rc on a PTY, its reads joined into chunks; `type` runs a command line. */
async function startReader(rcPath: string, emit: (m: FromReader) => void) {
  const shell = rawShell(rcPath);
  await shell.waitFor(MARK_B);
  let buf = '';
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (buf === '') return;
    emit({ chunk: buf });
    buf = '';
  };
  shell.pty.onData((d) => {
    buf += d;
    if (buf.length >= PLAIN_CHUNK_BYTES) flush();
    else timer ??= setTimeout(flush, 20);
  });
  return {
    async type(command: string) {
      shell.pty.write(`${command}\r`);
      await shell.waitFor(MARK_D);
      flush();
      emit({ done: true });
    },
    /** Kills the shell; resolves once node-pty reported its exit (a thread ended before that aborts the process). */
    kill: () =>
      new Promise<void>((resolve) => {
        shell.pty.onExit(() => resolve());
        shell.pty.kill('SIGKILL');
      }),
  };
}

if (!isMainThread) {
  // The reader on a thread of its own: chunks go to the main thread, which publishes them.
  const reader = await startReader(workerData as string, (m) => parentPort!.postMessage(m));
  parentPort!.on('message', (command: string) => {
    if (command === '') void reader.kill().then(() => parentPort!.postMessage({ stopped: true }));
    else void reader.type(command);
  });
  parentPort!.postMessage({ ready: true });
} else await main();

async function main(): Promise<void> {
  const [url, rcPath, subject, mode = 'same-thread'] = process.argv.slice(2);
  if (!url || !rcPath || !subject) {
    throw new Error('usage: flood-floor-child.ts <natsUrl> <rcPath> <subject> [same-thread|thread]');
  }
  const nc = await connect({ servers: url });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({
    name: `BENCH_FLOOR_${mode === 'thread' ? 'THREAD' : 'SAME'}`,
    subjects: [`${subject}.>`],
    storage: 'file' as never,
  });
  const js = jetstream(nc);
  /** JSON without escapes needed: printable ASCII less `"` and `\`. */
  const SAFE = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
  let seq = 0;
  let offset = 0;
  let published = 0;
  let started = 0;
  const acks: Array<Promise<unknown>> = [];
  const publish = (text: string) => {
    const head = `{"type":"terminal.output.received","data":{"terminalId":"floor","offset":${offset},"data":`;
    offset += text.length;
    published += text.length;
    const body = SAFE.test(text) ? `"${text}"` : JSON.stringify(text);
    const out = Buffer.allocUnsafe(head.length + Buffer.byteLength(body, 'utf8') + 2);
    let at = out.write(head, 0, 'latin1');
    at += out.write(body, at, 'utf8');
    at += out.write('}}', at, 'latin1');
    acks.push(js.publish(`${subject}.${seq % 64}`, out.subarray(0, at), { msgID: `floor-${seq++}` }));
  };
  const onReader = (m: FromReader) => {
    if ('chunk' in m) publish(m.chunk);
    else void Promise.all(acks.splice(0)).then(() => process.stdout.write(`done ${published - started}\n`));
  };
  let type: (command: string) => void;
  let stop: () => Promise<void>;
  if (mode === 'thread') {
    const worker = new Worker(new URL('./flood-floor-reader.mjs', import.meta.url), { workerData: rcPath });
    let stopped = () => {};
    await new Promise<void>((resolve) =>
      worker.on('message', (m: FromReader | { ready: true } | { stopped: true }) => {
        if ('ready' in m) resolve();
        else if ('stopped' in m) stopped();
        else onReader(m);
      }),
    );
    type = (command) => worker.postMessage(command);
    stop = () =>
      new Promise<void>((resolve) => {
        stopped = resolve;
        worker.postMessage('');
      });
  } else {
    const reader = await startReader(rcPath, onReader);
    type = (command) => void reader.type(command);
    stop = reader.kill;
  }
  let input = '';
  process.stdin.on('data', (d: Buffer) => {
    input += d.toString('utf8');
    for (let nl = input.indexOf('\n'); nl >= 0; nl = input.indexOf('\n')) {
      const line = input.slice(0, nl);
      input = input.slice(nl + 1);
      if (!line.startsWith('go ')) continue;
      started = published;
      type(line.slice(3));
    }
  });
  process.stdin.on('end', () => {
    void stop()
      .then(() => nc.close())
      .then(() => process.exit(0));
  });
  process.stdout.write('ready\n');
}
