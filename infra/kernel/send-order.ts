/**
 * @module
 * The order a FactWriter sends facts to the events stream in: the last one sent while its append is in
 * flight, and the last one asked for on each subject. From them, whether the next fact of a subject may go
 * out before the ack of the one before it (an early send): only when the last fact asked for on the subject
 * is also the last one sent to the stream. The early fact then expects that one to be the last stored
 * (`AppendRequest.expectedLastMsgId`): the log stores it right after it, where its subject sequence is the
 * one it would have expected, or refuses it (another writer's fact in between, or that one refused).
 */
type Sent = { id: string; subject: string };

export class SendOrder {
  #inFlight: Sent | undefined;
  readonly #lastAsked = new Map<string, string>();

  /** The id of the fact the next fact of `subject` may expect last in the stream; undefined: it waits. */
  expectable(subject: string): string | undefined {
    const last = this.#inFlight;
    return last && last.subject === subject && this.#lastAsked.get(subject) === last.id ? last.id : undefined;
  }

  /** A fact was asked for on `subject`; it stays the last one asked for there until `settled` settles. */
  asked(subject: string, id: string, settled: Promise<unknown>): void {
    this.#lastAsked.set(subject, id);
    const forget = () => {
      if (this.#lastAsked.get(subject) === id) this.#lastAsked.delete(subject);
    };
    settled.then(forget, forget);
  }

  /** A fact was sent to the events stream: the last one sent until another is, or its append settles. */
  sent<T>(subject: string, id: string, appended: Promise<T>): Promise<T> {
    const sent = { id, subject };
    this.#inFlight = sent;
    const settle = () => {
      if (this.#inFlight === sent) this.#inFlight = undefined;
    };
    appended.then(settle, settle);
    return appended;
  }
}
