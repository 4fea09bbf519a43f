import type { SendResult } from '../../machines/outbox/outbox.types.js';
import type { Clock } from '../clock/clock.js';
import type { ConnectivitySource } from '../connectivity/connectivity-source.js';
import type { Failure } from '../policy/failure.js';
import type { Outcome } from '../policy/outcome.js';
import type { Policy } from '../policy/policy.js';
import type { OutboxEntry, OutboxStore } from '../stores/outbox-store.js';
import { memoryStore } from '../stores/memory-store.js';
import type { DecisionEventDraft } from './decision-events.js';
import type { RequestRun } from './request-run.js';
import { outboxDecisionEvent } from './outbox-decision-event.js';
import { preparedOf, sendResultOf } from './durable-entry.js';
import { errorNameOf } from '../policy/error-name.js';
import { createOutboxRunner, type OutboxRunner } from './outbox-runner.js';
import { DurableRequest, type DurableRequests } from './durable-request.js';
import type { FlushResult } from './flush-result.js';
import { drainLimitOf, type DrainOptions } from './drain-options.js';
import { registerOutboxSync } from './background-sync.js';
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
  /**
   * Sends the entries that are due, as the outbox would (keeping their backoff and Retry-After, unlike `flush()`;
   * in order, not while offline, waiting for a lease another live tab or process holds), for at most
   * `timeLimitMs`: what an OS-scheduled task or a service worker's `sync` event calls. It waits for entries that
   * fall due within the limit, and resolves as soon as nothing is in flight and nothing more falls due, at once
   * when offline. Once the limit is spent no send starts; sends in flight are awaited, each within its request's
   * budget, so the limit must leave room for one send. Resolves like `flush()` (`reason: 'time-limit'` when due
   * entries were left unstarted). The outbox then goes on as usual while the client is open: a background task
   * calls `client.close()` once it resolves (nothing starts before that).
   * Rejects with `ArgumentError` for a bad `timeLimitMs`, with `StateError` once the client is closed.
   */
  drain(options?: DrainOptions): Promise<FlushResult>;
  /** Puts a dead-lettered entry back in the queue with its attempts reset; `false` if it is not a dead entry. */
  retry(id: string): Promise<boolean>;
  /**
   * Removes an entry, pending or dead-lettered, from the store and the outbox (a send in flight for it is
   * aborted); `false` if the store did not have it.
   */
  remove(id: string): Promise<boolean>;
}

/**
 * What the client fixes when `request()` is called, before durable work is loaded (failwise-client.ts):
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

/** What durable work needs of the client. */
export interface DurableWorkDeps {
  /** @default memoryStore() */
  store?: OutboxStore | undefined;
  clock: Clock;
  policy: Policy;
  connectivity?: ConnectivitySource | undefined;
  runner: MachineRunner;
  /** This client's name on the store's lease. */
  owner: string;
  /** The client's Random: the outbox's backoff jitter draws from it. */
  random: () => number;
  isOffline: () => boolean;
  /** The primary origin's id, for a failure that ended a send before any attempt. */
  primary: string;
  notify: (event: DecisionEventDraft) => void;
  /**
   * Names the request's route on it and gives the policy it runs by: an entry's own policy over its route's over
   * the client's (route-request.ts).
   */
  route: (prepared: PreparedRequest) => Readonly<Policy>;
  requestRun: RunOf;
  telemetry?: TelemetrySession | undefined;
  /** What telemetry may know of a request. */
  traced: (requestId: string, prepared: PreparedRequest) => TelemetryRequest;
  /** The client's `background` option: `'service-worker'` asks for a Background Sync after each stored entry. */
  background?: 'service-worker' | undefined;
}

/**
 * Durable work: the outbox runner on the client's store, `lifetime: 'durable'` requests, and the sends the
 * outbox makes (each one run of the request machine: a `RequestRun`). See docs/durable.md. The client loads this
 * module with `import()` when it is first needed: at once when it is given a store, otherwise on the first
 * durable request.
 */
export function createDurableWork(deps: DurableWorkDeps): DurableWork {
  const work = new Durable(deps);
  return {
    request: (prepared, start) => work.request(prepared, start),
    outbox: {
      size: () => work.outbox.size(),
      list: () => work.outbox.list(),
      flush: () => work.outbox.flush(),
      drain: (options) => work.outbox.drain(drainLimitOf(options)),
      retry: (id) => work.outbox.retry(id),
      remove: (id) => work.outbox.remove(id),
    },
    store: work.store,
    close: () => work.close(),
  };
}

/** The outbox runner of one client, its durable requests and the sends it makes. */
class Durable {
  readonly store: OutboxStore;
  readonly outbox: OutboxRunner;
  readonly #shared: DurableRequests;
  #outboxSize = 0;

  constructor(private readonly deps: DurableWorkDeps) {
    const { clock, policy, connectivity, telemetry } = deps;
    const store = (this.store = deps.store ?? memoryStore());
    this.outbox = createOutboxRunner({
      store,
      clock,
      policy,
      connectivity,
      runner: deps.runner,
      owner: deps.owner,
      random: deps.random,
      send: (entry, signal) => this.#sendEntry(entry, signal),
      onEmitted: (event) => {
        if (telemetry) telemetry.outbox(event);
        // The size is told when it changes (not, say, when an empty store has been read at start).
        if (event.type === 'outbox-changed') {
          if (event.size === this.#outboxSize) return;
          this.#outboxSize = event.size;
        }
        const decision = outboxDecisionEvent(event);
        if (decision) deps.notify(decision);
      },
    });
    this.#shared = {
      clock,
      primary: deps.primary,
      isOffline: deps.isOffline,
      outbox: this.outbox,
      sendWaiters: new Map(),
      waitingTraces: new Map(),
      writing: new Set(),
      stored: deps.background === 'service-worker' ? registerOutboxSync : undefined,
    };
  }

  /** A durable request (durable-request.ts), traced from when `client.request` was called. */
  request(prepared: PreparedRequest, start: DurableStart): Promise<Outcome> {
    const { clock, telemetry, requestRun } = this.deps;
    // Its span starts when `client.request` was called, however long durable work took to load.
    const trace = telemetry?.request(this.deps.traced(start.entryId, prepared), start.startedAt);
    const outcome = new DurableRequest(this.#shared, prepared, start, trace, requestRun).run();
    if (trace === undefined) return outcome;
    return outcome.then(
      (outcome) => (trace.end(outcome, clock.now()), outcome),
      (error: unknown) => {
        trace.end({ status: 'rejected', error: errorNameOf(error) }, clock.now());
        throw error;
      },
    );
  }

  close(): Promise<void> {
    for (const end of [...this.#shared.writing]) end();
    return this.outbox.close();
  }

  /** One send of an outbox entry: a run of the request machine, within what is left of the entry's attempts. */
  async #sendEntry(entry: OutboxEntry, signal: AbortSignal): Promise<SendResult> {
    const { clock, telemetry, requestRun } = this.deps;
    const prepared = preparedOf(entry);
    // The entry's own policy, kept with it, over its route's over the client's.
    const policy = this.deps.route(prepared);
    const startedAt = clock.now();
    const trace = telemetry?.send(
      this.deps.traced(entry.id, prepared),
      startedAt,
      this.#shared.waitingTraces.get(entry.id),
    );
    const send = requestRun(entry.id, prepared, startedAt, trace);
    // The entry keeps every failure of its live attempts, not only the last.
    const failures: Failure[] = (send.failures = []);
    // `entry.attempts` counts this send's first attempt already.
    const left = Math.max(1, Math.min(policy.attempts.max, policy.durable.maxAttempts - entry.attempts + 1));
    const runPolicy = left === policy.attempts.max ? policy : { ...policy, attempts: { max: left } };
    const output = await send.start(runPolicy, signal);
    trace?.end(output, clock.now());
    this.#shared.sendWaiters.get(entry.id)?.(output);
    if (output.status === 'succeeded') send.emit('succeeded', output.origin, output.attempts, {});
    return sendResultOf(output, this.deps.primary, failures, clock.now());
  }
}
