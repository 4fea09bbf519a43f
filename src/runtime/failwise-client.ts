import type { Clock } from '../clock/clock.js';
import { systemClock } from '../clock/system-clock.js';
import { isConnectivityHint, type ConnectivityHint } from '../connectivity/connectivity-source.js';
import { leanRunner } from '../engine/machine-runner.js';
import { quiesceClockTimers } from '../engine/timers.js';
import { abortReasonOf } from '../errors/abort-error.js';
import { ArgumentError } from '../errors/argument-error.js';
import { FailwiseError } from '../errors/failwise-error.js';
import { RequestFailedError } from '../errors/request-failed-error.js';
import { StateError } from '../errors/state-error.js';
import { describeValue } from '../policy/describe-value.js';
import type { Outcome } from '../policy/outcome.js';
import type { Policy } from '../policy/policy.js';
import type { ResolvedRoute } from '../policy/routes.js';
import { closedError } from '../stores/closed-error.js';
import type { OutboxStore } from '../stores/outbox-store.js';
import type { Transport } from '../transports/transport.js';
import { createAuthCoordinator } from './auth-coordinator.js';
import { STORE_WAIT_MS, settledWithin } from './bounded-wait.js';
import type { FailoverClientOptions } from './client-options.js';
import type { DecisionEventDraft } from './decision-events.js';
import type { CachedRead } from './cached-reads.js';
import type { ClientOutbox, DurableStart, DurableWork } from './durable-work.js';
import type { FailoverClient } from './failover-client.js';
import { prepareFetchInput, type FetchInit } from './fetch-input.js';
import { createHealthMonitor, type HealthMonitor, type HealthSnapshot } from './health-monitor.js';
import { keyGenerator, ownerName } from './idempotency-keys.js';
import { lazyPart, type LazyPart } from './lazy-part.js';
import { observerFailed } from './observer-failed.js';
import { prepareRequest, type FailoverRequest, type PreparedRequest } from './prepare-request.js';
import { prepareRequestMachine } from './prepare-request-machine.js';
import { createProbe } from './probe.js';
import { redactEvent, withoutQuery } from './redact.js';
import { isOffline } from './request-effects.js';
import { InteractiveRun, RequestRun, type InFlightRequest, type RequestHost } from './request-run.js';
import { routeRequest } from './route-request.js';
import { createRetrySlots } from './retry-slots.js';
import { createServerHolds, type ServerHolds } from './server-holds.js';
import { createOriginThrottles } from './origin-throttles.js';
import type { TelemetryRequest, TelemetryRun, TelemetrySession } from './telemetry.js';
import { validateClientOptions, type ResolvedOrigin } from './validate-client-options.js';

/** What a promise ended with, once all that matters is that it ended. */
const settled = (): void => undefined;

/**
 * The client (`createFailoverClient`), like ky's `Ky`: construction validates the options and wires the parts
 * (the origin set's health monitor, the request machine and its effects, durable work and cached reads loaded
 * when first needed); `request`, `fetch`, `health` and `close` are its methods, bound to it so that each can be
 * passed on alone (`fetch: client.fetch`). Each request is one `RequestRun` (request-run.ts).
 */
export class FailwiseClient implements FailoverClient {
  readonly policy: Readonly<Policy>;
  readonly outbox: ClientOutbox;

  readonly #options: FailoverClientOptions;
  readonly #clock: Clock;
  readonly #transport: Transport;
  readonly #store: OutboxStore | undefined;
  readonly #makeKey: (field: string) => string;
  /** A request's idempotency key, when it needs one made: one function for every request. */
  readonly #newKey = () => this.#makeKey('idempotencyKey');
  readonly #bases: readonly string[];
  readonly #telemetry: TelemetrySession | undefined;
  readonly #monitor: HealthMonitor;
  readonly #host: RequestHost;
  readonly #durable: LazyPart<DurableWork>;
  readonly #cached: LazyPart<CachedRead>;
  readonly #unsubscribeConnectivity: (() => void) | undefined;
  /** The requests in flight (durable sends included): connectivity hints and close() reach each. */
  readonly #inFlight = new Set<InFlightRequest>();
  /** The policy the health and outbox machines hold in their context (`#inspectable`). */
  readonly #machinePolicy: Policy;
  /** The client's routes, checked, each with its policy laid over the client's; none without the option. */
  readonly #routes: readonly ResolvedRoute[] | undefined;
  #requests = 0;
  #closed = false;

  /** Throws `PolicyError` synchronously, naming every bad option by path. */
  constructor(options: FailoverClientOptions, defaultTransport: (clock: Clock) => Transport) {
    const { origins, policy, routes } = validateClientOptions(options);
    this.policy = policy;
    this.#routes = routes;
    this.#options = options;
    const clock = (this.#clock = options.clock ?? systemClock);
    const transport = (this.#transport = options.transport ?? defaultTransport(clock));
    this.#store = options.store;
    this.#machinePolicy = this.#inspectable(policy);
    this.#makeKey = keyGenerator(options.generateIdempotencyKey);
    this.#bases = origins.map((origin) => origin.base);
    // Without the option no hook is ever called: each call site checks `telemetry` or a run's `trace` once.
    this.#telemetry = options.telemetry?.start({ origins });
    // Rule 6: requests already running hear each hint, so none starts an attempt (or waits one out) offline.
    this.#unsubscribeConnectivity = options.connectivity?.subscribe((hint) =>
      this.#connectivityChanged(hint),
    );
    const originsById = new Map(origins.map((origin) => [origin.id, origin]));
    // A 429/503 with Retry-After holds its origin back for every request of this client.
    const holds = createServerHolds(policy.retryAfter.maxHoldMs);
    const monitor = (this.#monitor = this.#startHealth(origins, originsById, holds));
    const auth = options.auth && createAuthCoordinator(options.auth);
    const { reconcile, connectivity } = options;
    const retrySlots = createRetrySlots(policy.retryBudget);
    this.#host = {
      clock,
      wantsEvents: options.onEvent !== undefined,
      notify: (event) => this.#notify(event),
      originsById,
      monitor,
      holds,
      // Each origin's send slots: its RateLimit quota, the quiet period after it throttled and the send rate its
      // 429s set (policy.throttle).
      throttles:
        policy.throttle === false
          ? undefined
          : createOriginThrottles(policy.throttle, policy.retryAfter.maxHoldMs),
      inFlight: this.#inFlight,
      retrySlots,
      policy,
      transport,
      auth,
      reconcile,
      classify: options.classify,
      connectivity,
      machine: prepareRequestMachine(this.#runner, clock, { auth: !!auth, reconcile: !!reconcile }),
      originIds: origins.map((origin) => origin.id),
      random: options.random,
      inspected: options.inspect !== undefined,
      input: {} as RequestHost['input'],
    };
    // Durable work (the outbox) and cached reads are loaded with import() when first needed, so that an app
    // making only interactive requests does not bundle them up front (docs/design.md#bundle-budget).
    this.#durable = this.#durableWork(origins[0]!.id);
    this.#cached = this.#cachedReads();
    this.outbox = this.#clientOutbox();
    // Each may be passed on alone (Apollo, ky, TanStack Query take `fetch: client.fetch`).
    this.request = this.request.bind(this);
    this.fetch = this.fetch.bind(this);
    this.health = this.health.bind(this);
    this.close = this.close.bind(this);
  }

  /**
   * Runs one request to its outcome. Rejects only for a malformed request (`RequestError`). Not an async function:
   * the promise it returns is the request's own, with no wrapper around it (nor the ticks to settle one).
   * Whatever throws on the way (a malformed request, a closed client, an app's key generator) still rejects it.
   */
  request(request: FailoverRequest): Promise<Outcome> {
    try {
      if (this.#closed) throw new FailwiseError('failwise: this client is closed');
      return this.#start(prepareRequest(request, this.#newKey, this.#options.isIdempotent));
    } catch (error) {
      // A malformed request, or a key that cannot be made: a rejection, as from an async function. (Both throw
      // FailwiseErrors; anything else would be a bug, passed on as it is.)
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      return Promise.reject(error);
    }
  }

  /** A drop-in `fetch`: the final response whenever the server answered; a rejection only when none came. */
  async fetch(input: string | URL | Request, init?: FetchInit): Promise<Response> {
    if (this.#closed) throw new FailwiseError('failwise: this client is closed');
    const prepared = await prepareFetchInput(
      input,
      init,
      this.#bases,
      this.#newKey,
      this.#options.isIdempotent,
    );
    // Closed while the body was read: nothing is sent.
    if (this.#closed) throw new FailwiseError('failwise: this client is closed');
    const outcome = await this.#start(prepared);
    if (outcome.status === 'succeeded') return outcome.response;
    if (outcome.status === 'failed' && outcome.response !== undefined) return outcome.response;
    if (outcome.status === 'failed' && outcome.reason === 'cancelled' && prepared.signal?.aborted)
      throw abortReasonOf(prepared.signal);
    throw new RequestFailedError(outcome);
  }

  health(): HealthSnapshot {
    return this.#monitor.health();
  }

  /**
   * Ends every request in flight, stops every timer, probe and send, closes the transport and the store (waited
   * for at most STORE_WAIT_MS a call).
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribeConnectivity?.();
    // Parts still loading are waited for (nothing more is loaded). Requests that were waiting for them go on
    // first, their reactions being registered earlier: a durable one is written to the store, a cached one
    // starts its interactive request; both then end below as the others do.
    const [work] = await Promise.all([this.#durable.close(), this.#cached.close()]);
    // What needs no store goes first: the outbox stops its machine at once (aborting its sends, whose entries
    // stay stored), then every request is cancelled, the probes stop and the transport closes. Only then is
    // the store waited for, and never longer than STORE_WAIT_MS a call: one that never answers must not
    // hang the app's shutdown.
    const outboxClosed = work?.close();
    const pending = [...this.#inFlight];
    for (const run of pending) run.cancel();
    this.#monitor.stop();
    // Settled, not fulfilled: a request that rejects must not end the wait for the others.
    await Promise.all(pending.map((run) => run.done!.then(settled, settled)));
    const transport = this.#transport;
    const transportClosed = Promise.resolve(transport.close?.()).catch(() => undefined);
    await outboxClosed;
    // Every timer of this client is cleared by now: a host timer the clock's queue kept armed goes too.
    quiesceClockTimers(this.#clock);
    const store = this.#store ?? work?.store;
    await Promise.all([
      transportClosed,
      store &&
        settledWithin(
          this.#clock,
          Promise.resolve().then(() => store.close()),
          STORE_WAIT_MS,
        ),
    ]);
  }

  /** Starts a checked request by its lifetime, under its route's policy; throws for a malformed request policy. */
  #start(prepared: PreparedRequest): Promise<Outcome> {
    const policy = this.#route(prepared);
    if (prepared.lifetime === 'durable') return this.#requestDurable(prepared, policy);
    if (prepared.lifetime === 'cached') return this.#requestCached(prepared, policy);
    return this.#requestInteractive(prepared, policy);
  }

  /**
   * Names the request's route on it and gives the policy it runs by (route-request.ts): the client's own object
   * for most requests.
   */
  #route(prepared: PreparedRequest): Readonly<Policy> {
    return routeRequest(prepared, this.policy, this.#routes);
  }

  #requestInteractive(prepared: PreparedRequest, policy: Readonly<Policy>): Promise<Outcome> {
    const requestId = `r${++this.#requests}`;
    const startedAt = this.#clock.now();
    const telemetry = this.#telemetry;
    const trace = telemetry && telemetry.request(this.#traced(requestId, prepared), startedAt);
    const run = new InteractiveRun(this.#host, requestId, prepared, startedAt, trace);
    // Rule 6: while the connectivity source says offline, an interactive request fails at once.
    if (isOffline(this.#host)) {
      run.emit('failed', undefined, 0, { reason: 'offline' });
      const outcome: Outcome = { status: 'failed', reason: 'offline', attempts: 0, elapsedMs: 0 };
      if (trace) trace.end(outcome, startedAt);
      return Promise.resolve(outcome);
    }
    return run.start(policy, prepared.signal);
  }

  /**
   * A durable request. Its entry id, start and budget are fixed now, before durable work is loaded: a slow load
   * counts against the budget. Its reaction to the load is registered before close() awaits it, so a request
   * made before close() is written to the store before the outbox is closed (reactions run in order).
   */
  #requestDurable(prepared: PreparedRequest, policy: Readonly<Policy>): Promise<Outcome> {
    const clock = this.#clock;
    const entryId = this.#makeKey('lifetime');
    const startedAt = clock.now();
    let expired = false;
    let onExpired: (() => void) | undefined;
    const timer = clock.setTimeout(() => {
      expired = true;
      onExpired?.();
    }, prepared.deadlineMs ?? policy.budgetMs);
    const start: DurableStart = {
      entryId,
      startedAt,
      onExpired: (fn) => (expired ? fn() : void (onExpired = fn)),
      clear: () => clock.clearTimeout(timer),
    };
    return this.#durable.get().then(
      (work) => work.request(prepared, start),
      (cause: unknown) => (start.clear(), loadFailed(cause)),
    );
  }

  /** A cached read. If cached reads cannot be loaded it is sent as an interactive request, as on a cache miss. */
  #requestCached(prepared: PreparedRequest, policy: Readonly<Policy>): Promise<Outcome> {
    return this.#cached.get().then(
      (read) => read(prepared, policy),
      () => this.#requestInteractive(prepared, policy),
    );
  }

  /** A request run that is not interactive: a durable request's decision events, a send of its entry, a cached answer. */
  #requestRun(requestId: string, prepared: PreparedRequest, startedAt: number, trace?: TelemetryRun) {
    return new RequestRun(this.#host, requestId, prepared, startedAt, trace);
  }

  /** What telemetry may know of a request (telemetry.ts): never its query, headers, body or key. */
  #traced(requestId: string, prepared: PreparedRequest): TelemetryRequest {
    return {
      requestId,
      method: prepared.method,
      path: withoutQuery(prepared.path),
      lifetime: prepared.lifetime,
      route: prepared.route,
    };
  }

  /**
   * Calls `onEvent` with a redacted event. An observer that throws cannot change what failwise does; its error
   * goes to `onEventError`, else where the host reports uncaught errors (observer-failed.ts).
   */
  #notify(event: DecisionEventDraft): void {
    const { onEvent } = this.#options;
    if (onEvent === undefined) return;
    const redacted = redactEvent(event);
    try {
      onEvent(redacted);
    } catch (error) {
      observerFailed(this.#options.onEventError, error, redacted);
    }
  }

  /** A connectivity hint: every request in flight hears it, after a network change drops pooled sockets. */
  #connectivityChanged(hint: ConnectivityHint): void {
    // Thrown back to the source that called with it: a hint failwise cannot read is the source's bug, and a
    // source that goes on to its other listeners finds them ignoring it too.
    if (!isConnectivityHint(hint))
      throw new ArgumentError(
        'connectivity listener',
        'hint',
        `expected "online", "offline" or "changed", got ${describeValue(hint)}`,
      );
    // Pooled sockets belong to the old network: dropped first, so that the reads sent again get new ones.
    if (hint === 'changed') this.#resetTransport();
    const at = this.#clock.now();
    for (const run of [...this.#inFlight]) run.connectivity(hint, at);
  }

  /** Drops the transport's pooled connections; a transport whose reset throws still lets requests hear the hint. */
  #resetTransport(): void {
    try {
      this.#transport.reset?.();
    } catch {
      // ignored: see above
    }
  }

  /** The lean executor runs every machine unless the app watches them (`inspect: withInspector(observer)`). */
  get #runner() {
    return this.#options.inspect?.runner ?? leanRunner;
  }

  /**
   * The policy as the client's machines hold it in their context. The Stately browser inspector's default
   * serializer writes into an object with more than 10 keys for a moment; the policy is frozen, so an inspected
   * client's machines get a shallow copy (same values) that the serializer may write into.
   */
  #inspectable(policy: Policy): Policy {
    return this.#options.inspect === undefined ? policy : { ...policy };
  }

  /** Starts the origin set's health machine, and its probes; its changes are told to telemetry and the app. */
  #startHealth(
    origins: readonly ResolvedOrigin[],
    originsById: ReadonlyMap<string, ResolvedOrigin>,
    holds: ServerHolds,
  ): HealthMonitor {
    const options = this.#options;
    const clock = this.#clock;
    const originOf = (id: string) => originsById.get(id)!;
    const offline = () => options.connectivity?.current() === 'offline';
    const probe = createProbe(options.probe, {
      transport: this.#transport,
      clock,
      policy: this.policy,
      originOf,
      isOffline: offline,
      holds,
    });
    return createHealthMonitor({
      origins,
      policy: this.#machinePolicy,
      clock,
      connectivity: options.connectivity,
      runner: this.#runner,
      holds,
      // The health machine's jitter (the wait after a failed probe) draws from its own seed, taken once from the
      // client's randomness, so that a fleet's clients spread apart and a seeded client repeats exactly.
      seed: Math.floor((options.random ?? Math.random)() * 4_294_967_296),
      probe,
      onChange: (change, active) => {
        this.#telemetry?.healthChanged(change.from, change.to, active, change.at);
        this.#notify({
          type: 'health-changed',
          from: change.from,
          to: change.to,
          criterion: change.criterion,
          origin: active,
          host: active && originOf(active).host,
        });
      },
    });
  }

  /**
   * Durable work, loaded when first needed. A store of the app's may hold entries a previous process left: the
   * outbox sends them once loaded. (A client's own memoryStore starts empty: nothing to load for until a durable
   * request.) An inspected client shows its outbox machine from the start.
   */
  #durableWork(primary: string): LazyPart<DurableWork> {
    const options = this.#options;
    const clock = this.#clock;
    const durable = lazyPart(
      () =>
        import('./durable-work.js').then(({ createDurableWork }) =>
          createDurableWork({
            store: this.#store,
            clock,
            policy: this.#machinePolicy,
            connectivity: options.connectivity,
            runner: this.#runner,
            // Named when durable work loads, not when the client is made (a name never fails: idempotency-keys.ts).
            owner: options.outboxOwner ?? ownerName(options.generateIdempotencyKey),
            random: options.random ?? Math.random,
            isOffline: () => isOffline(this.#host),
            primary,
            notify: (event) => this.#notify(event),
            route: (prepared) => this.#route(prepared),
            requestRun: (requestId, prepared, startedAt, trace) =>
              this.#requestRun(requestId, prepared, startedAt, trace),
            telemetry: this.#telemetry,
            traced: (requestId, prepared) => this.#traced(requestId, prepared),
            background: options.background,
          }),
        ),
      this.#heldClock,
    );
    if (this.#store || options.inspect) durable.start();
    return durable;
  }

  /** Cached reads, loaded when first needed (at once when the app gives a cache). */
  #cachedReads(): LazyPart<CachedRead> {
    const cached = lazyPart(
      () =>
        import('./cached-reads.js').then(({ createCachedReads }) =>
          createCachedReads({
            cache: this.#options.cache,
            clock: this.#clock,
            policy: this.policy,
            interactive: (prepared, policy) => this.#requestInteractive(prepared, policy),
            announceStale: (prepared, origin, attempts, startedAt) =>
              this.#requestRun(`c${++this.#requests}`, prepared, startedAt).emit(
                'succeeded',
                origin,
                attempts,
                {
                  stale: true,
                },
              ),
          }),
        ),
      this.#heldClock,
    );
    if (this.#options.cache) cached.start();
    return cached;
  }

  /** An app's own clock (simulated time) is held at its instant while a part loads (lazy-part.ts). */
  get #heldClock(): Clock | undefined {
    return this.#clock === systemClock ? undefined : this.#clock;
  }

  /** `client.outbox`: each method loads durable work, or answers at once for an outbox that must be empty. */
  #clientOutbox(): ClientOutbox {
    return {
      size: this.#outboxMethod('size', 0),
      list: this.#outboxMethod('list', []),
      flush: this.#outboxMethod('flush', { sent: 0, failed: 0, pending: 0 }),
      // Loads durable work whatever the store: its options are checked there (a task that drains has a store).
      drain: (options) =>
        this.#closed
          ? Promise.reject(new StateError('failwise outbox: drain() was called after close()'))
          : this.#durable.get().then((work) => work.outbox.drain(options), loadFailed),
      retry: this.#outboxMethod('retry', false),
      remove: this.#outboxMethod('remove', false),
    };
  }

  /**
   * A method of `client.outbox`. Without a store of the app's, a client that has made no durable request has an
   * empty outbox: it answers `empty` without loading durable work, as an empty memoryStore's outbox did (and
   * rejects as that did once the client is closed).
   */
  #outboxMethod<K extends keyof ClientOutbox>(method: K, empty: Awaited<ReturnType<ClientOutbox[K]>>) {
    return (...args: Parameters<ClientOutbox[K]>): ReturnType<ClientOutbox[K]> =>
      (this.#store || this.#durable.started()
        ? this.#durable
            .get()
            .then((work) => (work.outbox[method] as (...a: typeof args) => unknown)(...args), loadFailed)
        : this.#closed
          ? Promise.reject(
              method === 'size' || method === 'list'
                ? closedError('memoryStore.list')
                : new StateError(`failwise outbox: ${method}() was called after close()`),
            )
          : Promise.resolve(empty)) as ReturnType<ClientOutbox[K]>;
  }
}

function loadFailed(cause: unknown): never {
  throw new FailwiseError('failwise: durable work could not be loaded; nothing was stored or sent', {
    cause,
  });
}
