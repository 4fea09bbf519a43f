import type { Clock } from '../clock/clock.js';
import { FailwiseError } from '../errors/failwise-error.js';
import type { FailReason } from '../policy/failure.js';
import { isMendable } from '../policy/mendable.js';
import type { Outcome } from '../policy/outcome.js';
import { settledWithin, STORE_WAIT_MS } from './bounded-wait.js';
import { entryOf, type RunOutput } from './durable-entry.js';
import type { DurableStart } from './durable-work.js';
import type { OutboxRunner } from './outbox-runner.js';
import type { PreparedRequest } from './prepare-request.js';
import type { RequestRun } from './request-run.js';
import type { TelemetryRun } from './telemetry.js';

/** What the durable requests of one client share (durable-work.ts). */
export interface DurableRequests {
  clock: Clock;
  /** The primary origin's id, for a failure that ended a send before any attempt. */
  primary: string;
  isOffline: () => boolean;
  outbox: OutboxRunner;
  /** A durable request waiting for its first send's outcome, by entry id. */
  sendWaiters: Map<string, (output: RunOutput) => void>;
  /** The telemetry run of each durable request still waiting, by entry id. */
  waitingTraces: Map<string, TelemetryRun>;
  /** Durable requests whose entry is being written: close() ends them (the store may never answer). */
  writing: Set<() => void>;
  /** Called once each durable request's entry is stored and kept (the client's `background` option). */
  stored?: (() => void) | undefined;
}

/** Makes the decision events of a request (request-run.ts). */
type RunOf = (requestId: string, prepared: PreparedRequest, startedAt: number) => RequestRun;

/** How a durable request's wait ended: its first send's output, or why it stopped waiting. */
type Ended = { output: RunOutput; elapsedMs: number } | FailReason;

/**
 * One durable request: written to the store before anything is sent, then sent by the outbox in its turn. When
 * the outbox sends it at once, that send is the interactive try and its outcome is returned; otherwise (offline,
 * waiting behind earlier entries or for another tab's lease, a failure time can mend, or no end within the
 * budget) it is `deferred`, and the outbox goes on with it.
 */
export class DurableRequest {
  #ended: Ended | undefined;
  #wake: () => void = () => undefined;
  readonly #woken = new Promise<void>((resolve) => (this.#wake = resolve));
  /** Aborted when the request ends before its entry is written: a late write is then taken back. */
  readonly #abandoned = new AbortController();
  #giveUp: () => void = () => undefined;
  /** Aborted at once, so that a write landing a microtask later is taken back, never queued. */
  readonly #givenUp = new Promise<false>(
    (resolve) => (this.#giveUp = () => (this.#abandoned.abort(), resolve(false))),
  );
  #written: Promise<boolean> | undefined;
  /** The store has the entry: a request that gives up now must wait for it to be taken back. */
  #landed = false;
  /** The request's decision events, made when it starts running. */
  #events!: RequestRun;

  readonly #shared: DurableRequests;
  readonly #prepared: PreparedRequest;
  readonly #start: DurableStart;
  readonly #trace: TelemetryRun | undefined;
  readonly #requestRun: RunOf;

  constructor(
    shared: DurableRequests,
    prepared: PreparedRequest,
    start: DurableStart,
    trace: TelemetryRun | undefined,
    requestRun: RunOf,
  ) {
    this.#shared = shared;
    this.#prepared = prepared;
    this.#start = start;
    this.#trace = trace;
    this.#requestRun = requestRun;
  }

  async run(): Promise<Outcome> {
    const shared = this.#shared;
    const prepared = this.#prepared;
    const start = this.#start;
    const { entryId, startedAt } = start;
    this.#events = this.#requestRun(entryId, prepared, startedAt);
    shared.sendWaiters.set(entryId, (output) =>
      this.#end({ output, elapsedMs: shared.clock.now() - startedAt }),
    );
    if (this.#trace) shared.waitingTraces.set(entryId, this.#trace);
    start.onExpired(() => this.#end('budget-exhausted'));
    prepared.signal?.addEventListener('abort', this.#onAbort, { once: true });
    try {
      shared.writing.add(this.#closed);
      if (!(await this.#write())) return await this.#gaveUpOnStore();
      shared.writing.delete(this.#closed);
      if (prepared.signal?.aborted) this.#onAbort();
      return await this.#afterWrite();
    } finally {
      shared.writing.delete(this.#closed);
      start.clear();
      shared.sendWaiters.delete(entryId);
      shared.waitingTraces.delete(entryId);
      prepared.signal?.removeEventListener('abort', this.#onAbort);
    }
  }

  #end(value: Ended): void {
    this.#ended ??= value;
    this.#wake();
  }

  #onAbort = (): void => this.#end('cancelled');

  /**
   * close() while the write is under way: the write may still land within STORE_WAIT_MS, and then the request
   * is deferred (its entry is stored, for the next start); otherwise it ends cancelled, nothing stored.
   */
  #closed = (): void => {
    const { clock } = this.#shared;
    const timer = clock.setTimeout(() => (this.#end('cancelled'), this.#giveUp()), STORE_WAIT_MS);
    void this.#written?.then(
      () => (clock.clearTimeout(timer), this.#end('cancelled')),
      () => clock.clearTimeout(timer),
    );
  };

  /** Writes the entry: true once it is stored, false when the request gave up on the store first. */
  #write(): Promise<boolean> {
    const shared = this.#shared;
    const prepared = this.#prepared;
    const start = this.#start;
    const { clock } = shared;
    const entry = entryOf(prepared, start.entryId, start.startedAt);
    const landed = () => (this.#landed = true);
    const written = (this.#written = shared.outbox.enqueue(entry, this.#abandoned.signal, landed).then(
      (kept) => {
        if (kept) shared.stored?.();
        return kept;
      },
      (cause: unknown) => {
        throw new FailwiseError(
          'failwise: the durable request could not be written to the store; nothing was sent',
          { cause },
        );
      },
    ));
    // A store that does not answer within the budget (or before close()) must not hold the request: it
    // fails, nothing sent, rather than `deferred`, which would say the entry is stored. A budget spent before
    // the write began (durable work was loading) leaves the write STORE_WAIT_MS.
    if (this.#ended === undefined) void this.#woken.then(this.#giveUp);
    else {
      const timer = clock.setTimeout(this.#giveUp, STORE_WAIT_MS);
      void written.then(
        () => clock.clearTimeout(timer),
        () => clock.clearTimeout(timer),
      );
    }
    return Promise.race([written, this.#givenUp]);
  }

  /**
   * The request ended before the store answered. A write that lands after that is taken back (`enqueue` removes
   * it): failed, nothing stored or sent. One that landed just as the request gave up is waited for, up to
   * STORE_WAIT_MS: taken back, the outcome says so only once the store no longer has it (even if the process dies
   * the next instant); kept (the outbox already had it), the request is deferred, as its entry is stored.
   */
  async #gaveUpOnStore(): Promise<Outcome> {
    this.#abandoned.abort();
    const written = this.#written?.catch(() => false);
    if (written && this.#landed && (await settledWithin(this.#shared.clock, written, STORE_WAIT_MS))) {
      // Landed and kept just before the request gave up (the outbox has it and will send it): it is stored.
      if (await written)
        return this.#deferred(typeof this.#ended === 'string' ? this.#ended : 'budget-exhausted');
    }
    return this.#notStored();
  }

  #notStored(): Outcome {
    const reason = typeof this.#ended === 'string' ? this.#ended : 'budget-exhausted';
    this.#events.emit('failed', undefined, 0, { reason, failureClass: 'unexpected' });
    return {
      status: 'failed',
      reason,
      failure: {
        class: 'unexpected',
        requestSent: 'no',
        origin: this.#shared.primary,
        message: 'the store did not answer store.add before the request ended; nothing was stored or sent',
      },
      attempts: 0,
      elapsedMs: this.#shared.clock.now() - this.#start.startedAt,
    };
  }

  /** The entry is stored: the outcome of its first send when the outbox makes it within the wait, else deferred. */
  async #afterWrite(): Promise<Outcome> {
    const shared = this.#shared;
    const start = this.#start;
    const { entryId } = start;
    if (shared.isOffline()) return this.#deferred('offline');
    const started = await Promise.race([shared.outbox.started(entryId), this.#woken.then(() => true)]);
    if (!started && this.#ended === undefined) return this.#deferred('durable');
    await this.#woken;
    const ended = this.#ended!;
    if (typeof ended === 'string') return this.#deferred(ended);
    const { output, elapsedMs } = ended;
    if (output.status === 'succeeded') return { ...output, elapsedMs };
    // What the send's failure means for the entry is the outbox's decision, written to the store: the outcome
    // waits for it, so that an app told `failed` finds the entry dead in `outbox.list()` and can `retry` it.
    // A failure time can mend is dead-lettered too once the entry has no attempts or age left.
    const status = await shared.outbox.settled(entryId);
    if (status !== 'dead' && isMendable(output.reason)) return this.#deferred(output.reason, output);
    this.#events.emit('failed', output.origin, output.attempts, {
      reason: output.reason,
      failureClass: output.failure?.class,
    });
    return { ...output, elapsedMs: shared.clock.now() - start.startedAt, entryId };
  }

  /** Deferred, after the first send's output when it ended with a mendable failure (its origin and attempts). */
  #deferred(reason: FailReason | 'durable', after?: RunOutput): Outcome {
    this.#events.emit('deferred', after?.origin, after?.attempts, { reason });
    return { status: 'deferred', entryId: this.#start.entryId, reason };
  }
}
