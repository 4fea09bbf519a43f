import { systemClock } from '../clock/system-clock.js';
import { abortReasonOf } from '../errors/abort-error.js';
import { MachineError } from '../errors/machine-error.js';
import { StateError } from '../errors/state-error.js';
import type { Clock } from '../clock/clock.js';
import { FailwiseError } from '../errors/failwise-error.js';
import { RequestFailedError } from '../errors/request-failed-error.js';
import { cancelledBeforeStart } from '../policy/classify-failure.js';
import { isConnectivityHint } from '../connectivity/connectivity-source.js';
import { ArgumentError } from '../errors/argument-error.js';
import { describeValue } from '../policy/describe-value.js';
import { isSafeMethod } from '../policy/methods.js';
import type { Outcome } from '../policy/outcome.js';
import type { Policy } from '../policy/policy.js';
import type { TransportErrorPhase, TransportResult } from '../policy/transport-result.js';
import { StampedAttempt } from './stamped-attempt.js';
import type { AttemptInput, AttemptOutput } from '../../machines/request/request.types.js';
import { fetchTransport } from '../transports/fetch-transport.js';
import type { Transport } from '../transports/transport.js';
import { createAuthCoordinator } from './auth-coordinator.js';
import { createHealthMonitor, type HealthSnapshot } from './health-monitor.js';
import { createProbe } from './probe.js';
import type { ClientOutbox, DurableStart } from './durable-work.js';
import { lazyPart } from './lazy-part.js';
import { closedError } from '../stores/closed-error.js';
import { STORE_WAIT_MS, settledWithin } from './bounded-wait.js';
import type { FailoverClientOptions } from './client-options.js';
import type { DecisionEventDraft } from './decision-events.js';
import {
  CREDENTIAL_HEADERS,
  prepareRequest,
  type FailoverRequest,
  type PreparedRequest,
} from './prepare-request.js';
import { keyGenerator, ownerName } from './idempotency-keys.js';
import { failoverRequestOf, type FetchInit } from './fetch-input.js';
import { observerFailed } from './observer-failed.js';
import { redactEvent, withoutQuery } from './redact.js';
import type { TelemetryRequest, TelemetryRun } from './telemetry.js';
import { createRequestDriver } from './request-driver.js';
import { InteractiveRun, RequestRun, type RequestHost } from './request-run.js';
import { leanRunner } from '../engine/machine-runner.js';
import { quiesceClockTimers } from '../engine/timers.js';
import { createRetrySlots } from './retry-slots.js';
import { createServerHolds } from './server-holds.js';
import { validateClientOptions, type ResolvedOrigin } from './validate-client-options.js';

export type { ClientOutbox };

export interface FailoverClient {
  /** The complete, frozen policy this client runs by. */
  readonly policy: Readonly<Policy>;
  /** Runs one request to its outcome. Rejects only for a malformed request (`RequestError`). */
  request(request: FailoverRequest): Promise<Outcome>;
  /**
   * A drop-in `fetch` (already bound: pass it as the `fetch` option of Apollo, urql, ky, openapi-fetch ...).
   * `input` is a path, an absolute URL (a string or a `URL`) under a configured origin, or a `Request`; `init` is
   * fetch's, plus failwise's request fields. Resolves with the final `Response` whenever the server answered (a
   * 404 or the last 503 included, as fetch does); rejects only when there is none: with the signal's `reason`
   * when the caller aborted (a `DOMException` named `AbortError` for a plain `abort()`; an `Error` of that name where
   * there is no `DOMException`, as on React Native), else with `RequestFailedError` carrying the outcome (a `deferred`
   * durable request too). A URL under no configured origin, or a malformed request, rejects with `RequestError`.
   */
  fetch(input: string | URL | Request, init?: FetchInit): Promise<Response>;
  /** The origin set's health: its state, the origin reads go to now, and since when (docs/failover.md). */
  health(): HealthSnapshot;
  /** Durable work (docs/durable.md). */
  readonly outbox: ClientOutbox;
  /**
   * Ends every request in flight (`cancelled`; durable work stays in the store), stops every timer, probe and
   * send, and closes the transport and the store. It waits for the store at most `STORE_WAIT_MS` (1 s) a
   * call, on the client's clock: a store that never answers cannot hang it.
   */
  close(): Promise<void>;
}

export type { FetchInit };

/**
 * Creates a client that runs every request through the request machine. Throws `PolicyError`
 * synchronously, naming every bad option by path.
 */
export const createFailoverClient = /* @__PURE__ */ createClientFactory((clock) => fetchTransport({ clock }));

/**
 * `createFailoverClient` with its default transport: each package entry binds its own (the Node entry
 * passes a fetch transport that reads undici's error codes; browsers do not ship that code).
 */
export function createClientFactory(defaultTransport: (clock: Clock) => Transport) {
  return (options: FailoverClientOptions): FailoverClient => createClient(options, defaultTransport);
}

/** What a promise ended with, once all that matters is that it ended. */
const settled = (): void => undefined;

function createClient(
  options: FailoverClientOptions,
  defaultTransport: (clock: Clock) => Transport,
): FailoverClient {
  const { origins, policy } = validateClientOptions(options);
  const { reconcile, onEvent, connectivity } = options;
  const clock: Clock = options.clock ?? systemClock;
  const transport: Transport = options.transport ?? defaultTransport(clock);
  const auth = options.auth && createAuthCoordinator(options.auth);
  const makeKey = keyGenerator(options.generateIdempotencyKey);
  const originsById = new Map(origins.map((origin) => [origin.id, origin]));
  const originIds = origins.map((origin) => origin.id);
  const bases = origins.map((origin) => origin.base);
  const { store } = options;
  const inFlight = new Map<string, RequestRun<unknown>>();
  const retrySlots = createRetrySlots(policy.retryBudget);
  // A 429/503 with Retry-After holds its origin back for every request of this client.
  const holds = createServerHolds();
  let requests = 0;
  let closed = false;
  // Without the option no hook is ever called: each call site checks `telemetry` or a run's `trace` once.
  const telemetry = options.telemetry?.start({ origins });
  /** What telemetry may know of a request (telemetry.ts): never its query, headers, body or key. */
  const traced = (requestId: string, prepared: PreparedRequest): TelemetryRequest => ({
    requestId,
    method: prepared.method,
    path: withoutQuery(prepared.path),
    lifetime: prepared.lifetime,
  });

  // The machine only ever names an origin from the list it was given.
  const originOf = (id: string) => originsById.get(id)!;
  // Object.assign, not `{ ...value, at }`: a spread that adds keys takes V8 (Node 20) a slow path, about 1 µs a time.
  const stamp = <T extends object>(value: T) => Object.assign({}, value, { at: clock.now() });
  /**
   * Calls `onEvent` with a redacted event. An observer that throws cannot change what failwise does; its error
   * goes to `onEventError`, else where the host reports uncaught errors (observer-failed.ts).
   */
  const notify = (event: DecisionEventDraft) => {
    if (onEvent === undefined) return;
    const redacted = redactEvent(event);
    try {
      onEvent(redacted);
    } catch (error) {
      observerFailed(options.onEventError, error, redacted);
    }
  };
  const isOffline = () => connectivity?.current() === 'offline';
  // Rule 6: requests already running hear each hint, so none starts an attempt (or waits one out) offline.
  const unsubscribeConnectivity = connectivity?.subscribe((hint) => {
    // Thrown back to the source that called with it: a hint failwise cannot read is the source's bug, and a
    // source that goes on to its other listeners finds them ignoring it too.
    if (!isConnectivityHint(hint))
      throw new ArgumentError(
        'connectivity listener',
        'hint',
        `expected "online", "offline" or "changed", got ${describeValue(hint)}`,
      );
    // Pooled sockets belong to the old network: dropped first, so that the reads sent again get new ones.
    if (hint === 'changed') resetTransport();
    const at = clock.now();
    for (const entry of [...inFlight.values()]) entry.running?.connectivity(hint, at);
  });

  // What the machines hold in their context. The Stately browser inspector's default serializer writes into
  // an object with more than 10 keys for a moment; the policy is frozen, so an inspected client's machines
  // get a shallow copy (same values) that the serializer may write into.
  const inspectable = (p: Policy): Policy => (options.inspect === undefined ? p : { ...p });
  const machinePolicy = inspectable(policy);
  // The lean executor runs every machine unless the app watches them (`inspect: withInspector(observer)`).
  const runner = options.inspect?.runner ?? leanRunner;

  const monitor = createHealthMonitor({
    origins,
    policy: machinePolicy,
    clock,
    connectivity,
    runner,
    holds,
    // The health machine's jitter (the wait after a failed probe) draws from its own seed, taken once from the
    // client's randomness, so that a fleet's clients spread apart and a seeded client repeats exactly.
    seed: Math.floor((options.random ?? Math.random)() * 4_294_967_296),
    probe: createProbe(options.probe, { transport, clock, policy, originOf, isOffline, holds }),
    onChange: (change, active) => {
      if (telemetry) telemetry.healthChanged(change.from, change.to, active, change.at);
      notify({
        type: 'health-changed',
        from: change.from,
        to: change.to,
        criterion: change.criterion,
        origin: active,
        host: active && originOf(active).host,
      });
    },
  });

  const driver = createRequestDriver(
    {
      transport: runAttempt,
      chooseOrigin: ({ requestId, pinned, previousOrigin, avoid }) => {
        // Only safe methods (GET, HEAD, OPTIONS, TRACE) may go to an origin that accepts reads only.
        const write = !isSafeMethod(inFlight.get(requestId)!.prepared.method);
        const at = clock.now();
        // A pinned write's next attempt goes where its last did (rules 2, 7): only that origin's hold matters.
        // A retried read passes over the origins that failed it when another may take it (rule 7).
        const origin = pinned === true ? previousOrigin : monitor.choose(write, avoid);
        const holdUntil = origin === undefined ? undefined : holds.until(origin, at);
        if (holdUntil === undefined) return { origin, at };
        // Held: the machine waits, or takes an origin free of holds if the hold is past its budget.
        return {
          origin,
          at,
          holdUntil,
          alternative: pinned === true ? undefined : monitor.chooseUnheld(write, avoid),
        };
      },
      // Every request in progress (durable sends included) counts toward the retry budget's share.
      claimRetry: ({ requestId }) => ({
        granted: retrySlots.claim(requestId, inFlight.size),
        at: clock.now(),
      }),
      refreshAuth:
        auth &&
        (async ({ requestId, origin, authGeneration }) => (
          inFlight.get(requestId)?.trace?.note({ type: 'auth-refresh', origin }, clock.now()),
          await auth.refresh(authGeneration),
          stamp({})
        )),
      reconcile:
        reconcile &&
        (async ({ requestId, failure, attempts }) => {
          const { prepared, trace } = inFlight.get(requestId)!;
          const origin = originOf(failure.origin);
          const request = { ...prepared, requestId, url: origin.base + prepared.path, origin: origin.id };
          const result = await reconcile({ request, failure, attempts });
          trace?.note({ type: 'reconcile', result: result.status }, clock.now());
          return stamp(result);
        }),
    },
    { clock, runner },
  );

  /** What every request of this client reports to (request-run.ts). */
  const host: RequestHost = {
    clock,
    wantsEvents: onEvent !== undefined,
    notify,
    originsById,
    monitor,
    holds,
    inFlight,
    retrySlots,
  };
  const requestRun = (
    requestId: string,
    prepared: PreparedRequest,
    startedAt: number,
    trace?: TelemetryRun,
  ) => new RequestRun(host, requestId, prepared, startedAt, trace);

  // Durable work (the outbox) and cached reads are loaded with import() when first needed, so that an app
  // making only interactive requests does not bundle them up front (docs/design.md#bundle-budget). An app's
  // own clock (simulated time) is held at its instant while they load (lazy-part.ts).
  const hold = clock === systemClock ? undefined : clock;
  const durable = lazyPart(
    () =>
      import('./durable-work.js').then(({ createDurableWork }) =>
        createDurableWork({
          store,
          clock,
          policy: machinePolicy,
          connectivity,
          runner,
          // Named when durable work loads, not when the client is made (a name never fails: idempotency-keys.ts).
          owner: options.outboxOwner ?? ownerName(options.generateIdempotencyKey),
          isOffline,
          primary: origins[0]!.id,
          notify,
          requestRun,
          run,
          telemetry,
          traced,
        }),
      ),
    hold,
  );
  // A store of the app's may hold entries a previous process left: the outbox sends them once loaded. (A
  // client's own memoryStore starts empty: nothing to load for until a durable request.) An inspected client
  // shows its outbox machine from the start, as it always has.
  if (store || options.inspect) durable.start();
  const cached = lazyPart(
    () =>
      import('./cached-reads.js').then(({ createCachedReads }) =>
        createCachedReads({
          cache: options.cache,
          clock,
          policy,
          interactive: (prepared) => requestInteractive(prepared),
          announceStale: (prepared, origin, attempts, startedAt) =>
            requestRun(`c${++requests}`, prepared, startedAt).emit('succeeded', origin, attempts, {
              stale: true,
            }),
        }),
      ),
    hold,
  );
  if (options.cache) cached.start();

  const loadFailed = (cause: unknown): never => {
    throw new FailwiseError('failwise: durable work could not be loaded; nothing was stored or sent', {
      cause,
    });
  };

  /**
   * A durable request. Its entry id, start and budget are fixed now, before durable work is loaded: a slow load
   * counts against the budget. Its reaction to the load is registered before close() awaits it, so a request
   * made before close() is written to the store before the outbox is closed (reactions run in order).
   */
  function requestDurable(prepared: PreparedRequest): Promise<Outcome> {
    const entryId = makeKey('lifetime');
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
    return durable.get().then(
      (work) => work.request(prepared, start),
      (cause: unknown) => (start.clear(), loadFailed(cause)),
    );
  }

  /** A cached read. If cached reads cannot be loaded it is sent as an interactive request, as on a cache miss. */
  const requestCached = (prepared: PreparedRequest): Promise<Outcome> =>
    cached.get().then(
      (read) => read(prepared),
      () => requestInteractive(prepared),
    );

  /**
   * A method of `client.outbox`. Without a store of the app's, a client that has made no durable request has an
   * empty outbox: it answers `empty` without loading durable work, as an empty memoryStore's outbox did (and
   * rejects as that did once the client is closed).
   */
  const outboxMethod =
    <K extends keyof ClientOutbox>(method: K, empty: Awaited<ReturnType<ClientOutbox[K]>>) =>
    (...args: Parameters<ClientOutbox[K]>): ReturnType<ClientOutbox[K]> =>
      (store || durable.started()
        ? durable
            .get()
            .then((work) => (work.outbox[method] as (...a: typeof args) => unknown)(...args), loadFailed)
        : closed
          ? Promise.reject(
              method === 'size' || method === 'list'
                ? closedError('memoryStore.list')
                : new StateError(`failwise outbox: ${method}() was called after close()`),
            )
          : Promise.resolve(empty)) as ReturnType<ClientOutbox[K]>;
  const outbox: ClientOutbox = {
    size: outboxMethod('size', 0),
    list: outboxMethod('list', []),
    flush: outboxMethod('flush', { sent: 0, failed: 0, pending: 0 }),
    retry: outboxMethod('retry', false),
    remove: outboxMethod('remove', false),
  };

  /** Drops the transport's pooled connections; a transport whose reset throws still lets requests hear the hint. */
  function resetTransport(): void {
    try {
      transport.reset?.();
    } catch {
      // ignored: see above
    }
  }

  /** An attempt that ended before anything was sent, as a transport would report it. */
  const nothingSent = (phase: TransportErrorPhase, message: string) =>
    stamp<TransportResult>({ kind: 'error', phase, requestSent: 'no', message });
  /** Rule 6: nothing is sent while the connectivity source says offline. */
  const sentNothingOffline = () =>
    nothingSent('offline', 'the connectivity source reports offline; nothing was sent');

  /** One attempt: the request's headers, credentials where allowed, then the transport. */
  function runAttempt(input: AttemptInput, signal: AbortSignal): PromiseLike<AttemptOutput> {
    const run = inFlight.get(input.requestId)!;
    const origin = originOf(input.origin);
    if (isOffline()) return Promise.resolve(sentNothingOffline());
    // A copy the attempt may add to, over Object.keys: most requests have no headers, and on Hermes a for-in over
    // an empty object costs several times Object.keys (a spread costs more still).
    const headers: Record<string, string> = {};
    const names = Object.keys(run.prepared.headers);
    for (let i = 0; i < names.length; i++) headers[names[i]!] = run.prepared.headers[names[i]!]!;
    if (origin.credentials === 'omit') {
      // Credentials the app put on the request itself must not reach an origin that may not have them either.
      for (const name of CREDENTIAL_HEADERS) delete headers[name];
      return send(input, signal, run, origin, headers, undefined);
    }
    if (!auth) return send(input, signal, run, origin, headers, undefined);
    return Promise.resolve()
      .then(() => auth.headers(origin.id))
      .then(
        (credentials) => {
          // The device may have gone offline while the credentials were fetched.
          if (isOffline()) return sentNothingOffline();
          for (const [name, value] of Object.entries(credentials.headers))
            headers[name.toLowerCase()] = value;
          return send(input, signal, run, origin, headers, credentials.generation);
        },
        () => nothingSent('unknown', 'auth.headers() threw; nothing was sent'),
      );
  }

  function send(
    input: AttemptInput,
    signal: AbortSignal,
    run: RequestRun<unknown>,
    origin: ResolvedOrigin,
    headers: Record<string, string>,
    authGeneration: number | undefined,
  ): PromiseLike<AttemptOutput> {
    const { prepared, trace } = run;
    // The key comes from the runtime's own copy of the request: the machine knows only that there is one.
    if (prepared.idempotencyKey !== undefined)
      headers[policy.idempotency.header.toLowerCase()] = prepared.idempotencyKey;
    if (policy.attemptHeader) {
      headers[policy.attemptHeader.toLowerCase()] = `attempt=${input.attempt}; max=${input.attemptsMax}`;
    }
    // The attempt's span context (`traceparent`, ...), so that the server's spans join the trace.
    if (trace?.inject) trace.inject(input.attempt, headers);
    // Stamped in the reaction that hands the result to the machine, not in a `then` of its own (stamped-attempt.ts).
    return new StampedAttempt(
      transport.send({
        url: origin.base + prepared.path,
        method: prepared.method,
        headers,
        body: prepared.body,
        signal,
        connectTimeoutMs: Math.min(policy.timeouts.connectMs, input.timeoutMs),
        attemptsLeft: input.attemptsLeft,
        pins: origin.pins,
        fetchOptions: prepared.fetchOptions,
        stream: prepared.stream,
        idleMs: policy.timeouts.idleMs,
        // The caller's signal ends a body handed over as a stream after the attempt ended (docs/transports.md).
        bodySignal: prepared.signal,
      }),
      attemptOutput,
      authGeneration,
    );
  }

  /** A transport's result as the machine reads it: when it came, and the credentials' generation it was sent with. */
  function attemptOutput(result: TransportResult, authGeneration?: number): AttemptOutput {
    // A copy by hand, then the two fields: Object.assign with a second source costs Hermes (no JIT) about 1 µs,
    // and a spread that adds keys takes V8 (Node 20) a slow path; this costs both less.
    const output: Record<string, unknown> = {};
    for (const key in result)
      if (Object.prototype.hasOwnProperty.call(result, key))
        output[key] = result[key as keyof TransportResult];
    output.at = clock.now();
    output.authGeneration = authGeneration;
    return output as AttemptOutput;
  }

  /**
   * Runs a request through the request machine to its end; `signal` cancels it at once. A plain promise chain, not
   * an async function: a request in flight holds no suspended frame of its own.
   */
  function run<T>(record: RequestRun<T>, runPolicy: Policy, signal: AbortSignal | undefined): Promise<T> {
    const { requestId, prepared } = record;
    // Aborted before it began: as fetch, nothing is sent, so no attempt is counted or announced.
    if (signal?.aborted)
      return Promise.resolve(
        record.ended({
          status: 'failed',
          reason: 'cancelled',
          failure: cancelledBeforeStart(),
          attempts: 0,
        })!,
      );
    record.begin(signal);
    try {
      const running = driver.run(
        {
          requestId,
          method: prepared.method,
          origins: originIds,
          write: prepared.write,
          hasIdempotencyKey: prepared.idempotencyKey !== undefined,
          policy: inspectable(runPolicy),
          budgetMs: prepared.deadlineMs ?? runPolicy.budgetMs,
          startedAt: clock.now(),
          canRefreshAuth: !!auth,
          canReconcile: !!reconcile,
          // Durable work is deferred by the outbox, from the send's output: the machine itself never defers here.
          deferrable: false,
          random: options.random,
          deviceOffline: isOffline(),
        },
        record,
      );
      record.running = running;
      // Aborted while it started: no abort event comes now.
      if (signal?.aborted) running.cancel();
      return running.done as Promise<T>;
    } catch (error) {
      record.ended(undefined);
      return Promise.reject(
        error instanceof Error
          ? error
          : new MachineError(`requestMachine: ${String(error)}`, { cause: error }),
      );
    }
  }

  // Not an async function: the promise it returns is the request's own, with no wrapper around it (nor the
  // ticks to settle one). Whatever throws on the way (a malformed request, a closed client, an app's key
  // generator) still rejects it, as it did from an async function.
  function request(request: FailoverRequest, strict?: boolean): Promise<Outcome> {
    try {
      if (closed) throw new FailwiseError('failwise: this client is closed');
      const prepared = prepareRequest(request, () => makeKey('idempotencyKey'), strict, options.isIdempotent);
      if (prepared.lifetime === 'durable') return requestDurable(prepared);
      if (prepared.lifetime === 'cached') return requestCached(prepared);
      return requestInteractive(prepared);
    } catch (error) {
      // A malformed request, or a key that cannot be made: a rejection, as from an async function. (Both throw
      // FailwiseErrors; anything else would be a bug, passed on as it is.)
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      return Promise.reject(error);
    }
  }

  /** `client.fetch`: the final response whenever the server answered; a rejection only when none came. */
  async function fetchResponse(
    input: string | URL | Request,
    init: FetchInit | undefined,
  ): Promise<Response> {
    if (closed) throw new FailwiseError('failwise: this client is closed');
    const asked = await failoverRequestOf(input, init, bases);
    // As fetch: an already aborted signal rejects at once, before anything is sent.
    if (asked.signal?.aborted) throw abortReasonOf(asked.signal);
    const outcome = await request(asked, false);
    if (outcome.status === 'succeeded') return outcome.response;
    if (outcome.status === 'failed' && outcome.response !== undefined) return outcome.response;
    if (outcome.status === 'failed' && outcome.reason === 'cancelled' && asked.signal?.aborted)
      throw abortReasonOf(asked.signal);
    throw new RequestFailedError(outcome);
  }

  function requestInteractive(prepared: PreparedRequest): Promise<Outcome> {
    const requestId = `r${++requests}`;
    const startedAt = clock.now();
    const trace = telemetry && telemetry.request(traced(requestId, prepared), startedAt);
    const record = new InteractiveRun(host, requestId, prepared, startedAt, trace);
    // Rule 6: while the connectivity source says offline, an interactive request fails at once.
    if (isOffline()) {
      record.emit('failed', undefined, 0, { reason: 'offline' });
      const outcome: Outcome = { status: 'failed', reason: 'offline', attempts: 0, elapsedMs: 0 };
      if (trace) trace.end(outcome, startedAt);
      return Promise.resolve(outcome);
    }
    return run(record, policy, prepared.signal);
  }

  return {
    policy,
    request: (req) => request(req),
    health: () => monitor.health(),
    fetch: (input, init) => fetchResponse(input, init),
    outbox,
    async close() {
      if (closed) return;
      closed = true;
      unsubscribeConnectivity?.();
      // Parts still loading are waited for (nothing more is loaded). Requests that were waiting for them go on
      // first, their reactions being registered earlier: a durable one is written to the store, a cached one
      // starts its interactive request; both then end below as the others do.
      const [work] = await Promise.all([durable.close(), cached.close()]);
      // What needs no store goes first: the outbox stops its machine at once (aborting its sends, whose entries
      // stay stored), then every request is cancelled, the probes stop and the transport closes. Only then is
      // the store waited for, and never longer than STORE_WAIT_MS a call: one that never answers must not
      // hang the app's shutdown.
      const outboxClosed = work?.close();
      const pending = [...inFlight.values()];
      for (const entry of pending) entry.running?.cancel();
      monitor.stop();
      // Settled, not fulfilled: a request that rejects must not end the wait for the others.
      await Promise.all(
        pending.flatMap((entry) => (entry.running ? [entry.running.done.then(settled, settled)] : [])),
      );
      const transportClosed = Promise.resolve(transport.close?.()).catch(() => undefined);
      await outboxClosed;
      // Every timer of this client is cleared by now: a host timer the clock's queue kept armed goes too.
      quiesceClockTimers(clock);
      const storeToClose = store ?? work?.store;
      await Promise.all([
        transportClosed,
        storeToClose &&
          settledWithin(
            clock,
            Promise.resolve().then(() => storeToClose.close()),
            STORE_WAIT_MS,
          ),
      ]);
    },
  };
}
