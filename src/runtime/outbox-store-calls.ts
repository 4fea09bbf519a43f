import type { Clock } from '../clock/clock.js';
import { answeredWithin, STORE_ANSWER_MS } from './bounded-wait.js';

/**
 * The outbox runner's calls to its store: each one tracked until it settles, so that close() waits for writes
 * it did not stop rather than cutting them in half; the ones the scheduler waits on are also taken as failed
 * after STORE_ANSWER_MS without an answer.
 */
export class StoreCalls {
  readonly #clock: Clock;
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #watches = new Set<() => void>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  tracked<T>(promise: Promise<T>): Promise<T> {
    const settled = promise.then(
      () => undefined,
      () => undefined,
    );
    this.#inFlight.add(settled);
    void settled.then(() => this.#inFlight.delete(settled));
    return promise;
  }

  /** A store call the scheduler waits on: tracked, and taken as failed after STORE_ANSWER_MS without an answer. */
  answered<T>(promise: Promise<T>, what: string): Promise<T> {
    return answeredWithin(this.#clock, this.tracked(promise), STORE_ANSWER_MS, what, this.#watches);
  }

  /** The scheduler hears no more answers: their watch timers go (close() leaves no timer running). */
  stopWatching(): void {
    for (const stop of [...this.#watches]) stop();
  }

  /** The calls started and not yet settled, all together; undefined when there are none. */
  inFlight(): Promise<unknown> | undefined {
    return this.#inFlight.size > 0 ? Promise.all([...this.#inFlight]) : undefined;
  }
}
