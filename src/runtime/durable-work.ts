import type { SendResult } from '../../machines/outbox/outbox.types.js';
import type { Clock } from '../clock/clock.js';
import type { ConnectivitySource } from '../connectivity/connectivity-source.js';
import { FailwiseError } from '../errors/failwise-error.js';
import type { Failure, FailReason } from '../policy/failure.js';
import type { Outcome } from '../policy/outcome.js';
import type { Policy } from '../policy/policy.js';
import type { OutboxEntry, OutboxStore } from '../stores/outbox-store.js';
import { memoryStore } from '../stores/memory-store.js';
import type { DecisionEventDraft } from './decision-events.js';
import type { RequestRun } from './request-run.js';
import { outboxDecisionEvent } from './outbox-decision-event.js';
import { entryOf, preparedOf, sendResultOf, type RunOutput } from './durable-entry.js';
import { isMendable } from '../policy/mendable.js';
import { errorNameOf } from '../policy/error-name.js';
import { createOutboxRunner } from './outbox-runner.js';
import type { FlushResult } from './flush-result.js';
import { STORE_WAIT_MS } from './bounded-wait.js';
import type { PreparedRequest } from './prepare-request.js';
import type { MachineRunner } from '../engine/machine-runner.js';
import type { TelemetryRequest, TelemetryRun, TelemetrySession } from './telemetry.js';

/** `client.outbox`: the durable work this client's store holds. */
export interface ClientOutbox {
  /** Entries in the store, dead-lettered ones included. */
  size(): Promise<number>;
  /** Every entry, dead-lettered ones included (`status: 'dead'`, with `deadReason`), in the order they were made. */
  list(): Promise<OutboxEntry[]>;
  /**
   * Sends every waiting entry now, backoff or not (but in order, not while offline, and never before a server's
   * Retry-After), and resolves when those sends have ended and their outcomes are stored, with what was sent,
   * dead-lettered and is still pending, and why (`reason`). While another live tab or process holds the lease it
   * waits for it, up to `policy.durable.flushWaitMs`.
   */
  flush(): Promise<FlushResult>;
  /** Puts a dead-lettered entry back in the queue with its attempts reset; `false` if it is not a dead entry. */
  retry(id: string): Promise<boolean>;
  /**
   * Removes an entry, pending or dead-lettered, from the store and the outbox (a send in flight for it is
   * aborted); `false` if the store did not have it.
   */
  remove(id: string): Promise<boolean>;
}

/**
 * What the client fixes when `request()` is called, before durable work is loaded (create-failover-client.ts):
 * the entry's id, when the request started, and its budget's timer, armed then, so that the time taken to load
 * durable work counts against the budget instead of moving it.
 */
export interface DurableStart {
  entryId: string;
  startedAt: number;
  /** Calls `fn` once the request's budget has run out: at once if it already has. */
  onExpired(fn: () => void): void;
  /** Clears the budget's timer. */
  clear(): void;
}

/** What `createDurableWork` gives the client. */
export interface DurableWork {
  request(prepared: PreparedRequest, start: DurableStart): Promise<Outcome>;
  outbox: ClientOutbox;
  /** The store the outbox runs on: the client closes it, after `close()`. */
  store: OutboxStore;
  /** Closes the outbox runner (not the store). */
  close(): Promise<void>;
}

/** A request run of the client (request-run.ts): a durable request's decision events, or one send of its entry. */
type RunOf = (
  requestId: string,
  prepared: PreparedRequest,
  startedAt: number,
  trace?: TelemetryRun,
) => RequestRun;

/**
 * Durable work: the outbox runner on the client's store, `lifetime: 'durable'` requests, and the sends the
 * outbox makes (each one run of the request machine through `run`). See docs/durable.md. The client loads this
 * module with `import()` when it is first needed: at once when it is given a store, otherwise on the first
 * durable request.
 */
export function createDurableWork(deps: {
  /** @default memoryStore() */
  store?: OutboxStore | undefined;
  clock: Clock;
  policy: Policy;
  connectivity?: ConnectivitySource | undefined;
  runner: MachineRunner;
  /** This client's name on the store's lease. */
  owner: string;
  isOffline: () => boolean;
  /** The primary origin's id, for a failure that ended a send before any attempt. */
  primary: string;
  notify: (event: DecisionEventDraft) => void;
  requestRun: RunOf;
  /** Runs the request machine for `record` to its end; `signal` cancels it. */
  run: (record: RequestRun, policy: Policy, signal: AbortSignal | undefined) => Promise<RunOutput>;
  telemetry?: TelemetrySession | undefined;
  /** What telemetry may know of a request. */
  traced: (requestId: string, prepared: PreparedRequest) => TelemetryRequest;
}): DurableWork {
  const { clock, policy, connectivity, isOffline, notify, requestRun, run, telemetry } = deps;
  const store = deps.store ?? memoryStore();
  /** A durable request waiting for its first send's outcome, by entry id. */
  const sendWaiters = new Map<string, (output: RunOutput) => void>();
  /** The telemetry run of each durable request still waiting, by entry id. */
  const waitingTraces = new Map<string, TelemetryRun>();
  /** Durable requests whose entry is being written: close() ends them (the store may never answer). */
  const writing = new Set<() => void>();
  let outboxSize = 0;

  const outbox = createOutboxRunner({
    store,
    clock,
    policy,
    connectivity,
    runner: deps.runner,
    owner: deps.owner,
    send: (entry, signal) => sendEntry(entry, signal),
    onEmitted: (event) => {
      if (telemetry) telemetry.outbox(event);
      // The size is told when it changes (not, say, when an empty store has been read at start).
      if (event.type === 'outbox-changed') {
        if (event.size === outboxSize) return;
        outboxSize = event.size;
      }
      const decision = outboxDecisionEvent(event);
      if (decision) notify(decision);
    },
  });

  /**
   * A durable request: written to the store before anything is sent (rule 10), then sent by the outbox in its
   * turn. When the outbox sends it at once, that send is the interactive try and its outcome is returned;
   * otherwise (offline, waiting behind earlier entries or for another tab's lease, a failure time can mend, or
   * no end within the budget) it is `deferred`, and the outbox goes on with it.
   */
  function requestDurable(prepared: PreparedRequest, start: DurableStart): Promise<Outcome> {
    // Its span starts when `client.request` was called, however long durable work took to load.
    const trace = telemetry?.request(deps.traced(start.entryId, prepared), start.startedAt);
    if (trace === undefined) return requestEntry(prepared, start, undefined);
    return requestEntry(prepared, start, trace).then(
      (outcome) => (trace.end(outcome, clock.now()), outcome),
      (error: unknown) => {
        trace.end({ status: 'rejected', error: errorNameOf(error) }, clock.now());
        throw error;
      },
    );
  }

  async function requestEntry(
    prepared: PreparedRequest,
    start: DurableStart,
    trace: TelemetryRun | undefined,
  ): Promise<Outcome> {
    const { entryId, startedAt } = start;
    const events = requestRun(entryId, prepared, startedAt);
    /** Deferred, after the first send's output when it ended with a mendable failure (its origin and attempts). */
    const deferred = (reason: FailReason | 'durable', after?: RunOutput): Outcome => {
      events.emit('deferred', after?.origin, after?.attempts, { reason });
      return { status: 'deferred', entryId, reason };
    };
    let ended: { output: RunOutput; elapsedMs: number } | FailReason | undefined;
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    const end = (value: NonNullable<typeof ended>) => {
      ended ??= value;
      wake();
    };
    sendWaiters.set(entryId, (output) => end({ output, elapsedMs: clock.now() - startedAt }));
    if (trace) waitingTraces.set(entryId, trace);
    start.onExpired(() => end('budget-exhausted'));
    const onAbort = () => end('cancelled');
    prepared.signal?.addEventListener('abort', onAbort, { once: true });
    // Aborted when the request ends before its entry is written: a late write is then taken back.
    const abandoned = new AbortController();
    let giveUp!: () => void;
    // Aborted at once, so that a write landing a microtask later is taken back, never queued.
    const givenUp = new Promise<false>((resolve) => (giveUp = () => (abandoned.abort(), resolve(false))));
    let written: Promise<boolean> | undefined;
    // close() while the write is under way: the write may still land within STORE_WAIT_MS, and then the request
    // is deferred (its entry is stored, for the next start); otherwise it ends cancelled, nothing stored.
    const closed = () => {
      const timer = clock.setTimeout(() => (end('cancelled'), giveUp()), STORE_WAIT_MS);
      void written?.then(
        () => (clock.clearTimeout(timer), end('cancelled')),
        () => clock.clearTimeout(timer),
      );
    };
    try {
      writing.add(closed);
      written = outbox.enqueue(entryOf(prepared, entryId, startedAt), abandoned.signal).then(
        () => true,
        (cause: unknown) => {
          throw new FailwiseError(
            'failwise: the durable request could not be written to the store; nothing was sent',
            { cause },
          );
        },
      );
      // A store that does not answer within the budget (or before close()) must not hold the request: it
      // fails, nothing sent, rather than `deferred`, which would say the entry is stored. A budget spent before
      // the write began (durable work was loading) leaves the write STORE_WAIT_MS.
      if (ended === undefined) void woken.then(giveUp);
      else {
        const timer = clock.setTimeout(giveUp, STORE_WAIT_MS);
        void written.then(
          () => clock.clearTimeout(timer),
          () => clock.clearTimeout(timer),
        );
      }
      if (!(await Promise.race([written, givenUp]))) {
        abandoned.abort();
        written.catch(() => undefined);
        const reason = typeof ended === 'string' ? ended : 'budget-exhausted';
        events.emit('failed', undefined, 0, { reason, failureClass: 'unexpected' });
        return {
          status: 'failed',
          reason,
          failure: {
            class: 'unexpected',
            requestSent: 'no',
            origin: deps.primary,
            message:
              'the store did not answer store.add before the request ended; nothing was stored or sent',
          },
          attempts: 0,
          elapsedMs: clock.now() - startedAt,
        };
      }
      writing.delete(closed);
      if (prepared.signal?.aborted) onAbort();
      if (isOffline()) return deferred('offline');
      const started = await Promise.race([outbox.started(entryId), woken.then(() => true)]);
      if (!started && ended === undefined) return deferred('durable');
      await woken;
      if (typeof ended === 'string') return deferred(ended);
      const { output, elapsedMs } = ended!;
      if (output.status === 'succeeded') return { ...output, elapsedMs };
      // What the send's failure means for the entry is the outbox's decision, written to the store: the outcome
      // waits for it, so that an app told `failed` finds the entry dead in `outbox.list()` and can `retry` it.
      // A failure time can mend is dead-lettered too once the entry has no attempts or age left.
      const status = await outbox.settled(entryId);
      if (status !== 'dead' && isMendable(output.reason)) return deferred(output.reason, output);
      events.emit('failed', output.origin, output.attempts, {
        reason: output.reason,
        failureClass: output.failure?.class,
      });
      return { ...output, elapsedMs: clock.now() - startedAt, entryId };
    } finally {
      writing.delete(closed);
      start.clear();
      sendWaiters.delete(entryId);
      waitingTraces.delete(entryId);
      prepared.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** One send of an outbox entry: a run of the request machine, within what is left of the entry's attempts. */
  async function sendEntry(entry: OutboxEntry, signal: AbortSignal): Promise<SendResult> {
    const prepared = preparedOf(entry);
    const startedAt = clock.now();
    const trace = telemetry?.send(deps.traced(entry.id, prepared), startedAt, waitingTraces.get(entry.id));
    const send = requestRun(entry.id, prepared, startedAt, trace);
    // The entry keeps every failure of its live attempts, not only the last.
    const failures: Failure[] = (send.failures = []);
    // `entry.attempts` counts this send's first attempt already.
    const left = Math.max(1, Math.min(policy.attempts.max, policy.durable.maxAttempts - entry.attempts + 1));
    const runPolicy = left === policy.attempts.max ? policy : { ...policy, attempts: { max: left } };
    const output = await run(send, runPolicy, signal);
    trace?.end(output, clock.now());
    sendWaiters.get(entry.id)?.(output);
    if (output.status === 'succeeded') send.emit('succeeded', output.origin, output.attempts, {});
    return sendResultOf(output, deps.primary, failures, clock.now());
  }

  return {
    request: requestDurable,
    outbox: {
      size: () => outbox.size(),
      list: () => outbox.list(),
      flush: () => outbox.flush(),
      retry: (id) => outbox.retry(id),
      remove: (id) => outbox.remove(id),
    },
    store,
    close: () => {
      for (const end of [...writing]) end();
      return outbox.close();
    },
  };
}
