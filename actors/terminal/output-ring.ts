/**
 * @module
 * The retained tail of one terminal's output as UTF-8 bytes in one ring
 * buffer, for `terminal.read` and exec replies. A flood passes through it: as
 * a list of the PTY's strings it turned every read into a long-lived object
 * (promoted to V8's old space, then garbage), and 100 MB of output grew the
 * heap by ~70 MiB before a full GC. Here each read is copied into bytes once
 * and nothing per read outlives it. The buffer grows by doubling from 4 KiB
 * (an idle terminal holds little) up to the limit, and never shrinks.
 */

const INITIAL_BYTES = 4 * 1024;

export class OutputRing {
  readonly #max: number;
  #buf: Buffer;
  /** Where the byte at offset `start` sits in `#buf`. */
  #head = 0;
  /** Stream offset of the first retained byte (always a character's first byte). */
  start = 0;
  /** Stream offset of the next byte. */
  end = 0;

  constructor(maxBytes: number) {
    this.#max = Math.max(1, maxBytes);
    this.#buf = Buffer.allocUnsafe(Math.min(INITIAL_BYTES, this.#max));
  }

  /** Bytes held now. */
  get size(): number {
    return this.end - this.start;
  }

  /** Appends `data`, whose UTF-8 length is `bytes`; the oldest bytes leave when the limit is passed. */
  append(data: string, bytes: number): void {
    if (bytes === 0) return;
    if (bytes >= this.#max) {
      // Only its last `#max` bytes can stay: start over with them.
      const encoded = Buffer.from(data, 'utf8');
      this.#grow(this.#max);
      encoded.copy(this.#buf, 0, bytes - this.#max);
      this.#head = 0;
      this.end += bytes;
      this.start = this.end - this.#max;
      this.#alignStart();
      return;
    }
    if (this.size + bytes > this.#buf.length && this.#buf.length < this.#max) {
      this.#grow(Math.min(this.#max, Math.max(this.#buf.length * 2, this.size + bytes)));
    }
    const cap = this.#buf.length;
    const at = (this.#head + this.size) % cap;
    if (at + bytes <= cap) this.#buf.write(data, at, bytes, 'utf8');
    else {
      // Wraps around the end: Buffer#write stops before a character that does not fit, so encode first.
      const encoded = Buffer.from(data, 'utf8');
      encoded.copy(this.#buf, at, 0, cap - at);
      encoded.copy(this.#buf, 0, cap - at);
    }
    this.end += bytes;
    const over = this.size - cap;
    if (over > 0) {
      this.start += over;
      this.#head = (this.#head + over) % cap;
      this.#alignStart();
    }
  }

  /** The retained output between two offsets (clamped), decoded; a cut inside a character decodes as U+FFFD. */
  read(from: number, to = this.end): string {
    const a = Math.max(from, this.start);
    const b = Math.min(to, this.end);
    if (a >= b) return '';
    const cap = this.#buf.length;
    const at = (this.#head + (a - this.start)) % cap;
    const len = b - a;
    if (at + len <= cap) return this.#buf.toString('utf8', at, at + len);
    return Buffer.concat([this.#buf.subarray(at), this.#buf.subarray(0, len - (cap - at))]).toString('utf8');
  }

  /** A bigger buffer holding the same bytes from position 0. */
  #grow(capacity: number): void {
    if (capacity <= this.#buf.length) return;
    const next = Buffer.allocUnsafe(capacity);
    const size = this.size;
    const cap = this.#buf.length;
    const first = Math.min(size, cap - this.#head);
    this.#buf.copy(next, 0, this.#head, this.#head + first);
    if (first < size) this.#buf.copy(next, first, 0, size - first);
    this.#buf = next;
    this.#head = 0;
  }

  /** Moves `start` past UTF-8 continuation bytes, so the tail starts on a whole character. */
  #alignStart(): void {
    const cap = this.#buf.length;
    while (this.start < this.end && (this.#buf[this.#head]! & 0xc0) === 0x80) {
      this.start++;
      this.#head = (this.#head + 1) % cap;
    }
  }
}
