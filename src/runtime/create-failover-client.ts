import { systemClock } from '../clock/system-clock.js';
import type { Clock } from '../clock/clock.js';
import { FailwiseError } from '../errors/failwise-error.js';
import { RequestFailedError } from '../errors/request-failed-error.js';
import type { Outcome } from '../policy/outcome.js';
import type { Policy } from '../policy/policy.js';
import type { TransportResult } from '../policy/transport-result.js';
import type {
  AttemptInput,
  RequestMachineEmitted,
  RequestMachineOutput,
} from '../../machines/request/request.types.js';
import { fetchTransport } from '../transports/fetch-transport.js';
import type { Transport } from '../transports/transport.js';
import { createAuthCoordinator } from './auth-coordinator.js';
import type { FailoverClientOptions } from './client-options.js';
import type { DecisionEvent } from './decision-events.js';
import { prepareRequest, type FailoverRequest, type PreparedRequest } from './prepare-request.js';
import { redactEvent } from './redact.js';
import { createRequestDriver, type RunningRequest } from './request-driver.js';
import { validateClientOptions, type ResolvedOrigin } from './validate-client-options.js';

export interface FailoverClient {
  /** The complete, frozen policy this client runs by. */
  readonly policy: Readonly<Policy>;
  /** Runs one request to its outcome. Rejects only for a malformed request (`RequestError`). */
  request(request: FailoverRequest): Promise<Outcome>;
  /**
   * The fetch-shaped door: resolves with the `Response` of a `succeeded` outcome, otherwise rejects
   * with `RequestFailedError` carrying the whole outcome.
   */
  fetch(path: string, init?: FetchInit): Promise<Response>;
  /** Ends every request in flight (`cancelled`), stops every timer and releases the transport. */
  close(): Promise<void>;
}

/** fetch's `init`, plus failwise's request fields. */
export type FetchInit = Omit<RequestInit, 'body' | 'headers' | 'method' | 'signal'> &
  Omit<FailoverRequest, 'path'>;

/** RequestInit fields that `client.fetch` accepts and ignores: the transport decides them. */
const FETCH_ONLY_FIELDS = new Set([
  'cache',
  'credentials',
  'integrity',
  'keepalive',
  'mode',
  'priority',
  'redirect',
  'referrer',
  'referrerPolicy',
  'window',
]);

/** Headers that carry credentials: never sent to an origin with `credentials: 'omit'` (rule 8). */
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie'];

interface InFlight {
  prepared: PreparedRequest;
  running?: RunningRequest;
}

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

function createClient(
  options: FailoverClientOptions,
  defaultTransport: (clock: Clock) => Transport,
): FailoverClient {
  const { origins, policy } = validateClientOptions(options);
  const clock: Clock = options.clock ?? systemClock;
  const transport: Transport = options.transport ?? defaultTransport(clock);
  const auth = options.auth ? createAuthCoordinator(options.auth) : undefined;
  const random = options.random ?? Math.random;
  const generateKey = options.generateIdempotencyKey ?? (() => globalThis.crypto.randomUUID());
  const originsById = new Map(origins.map((origin) => [origin.id, origin]));
  const inFlight = new Map<string, InFlight>();
  let nextRequestNumber = 0;
  let closed = false;

  const originOf = (id: string): ResolvedOrigin => {
    const origin = originsById.get(id);
    if (!origin) throw new FailwiseError(`failwise: the machine chose an unknown origin "${id}"`);
    return origin;
  };

  const driver = createRequestDriver(
    {
      attempt: (input, signal) => runAttempt(input, signal),
      ...(auth && {
        refreshAuth: async (input) => (await auth.refresh(input.authGeneration), { at: clock.now() }),
      }),
      ...(options.reconcile && {
        reconcile: async (input) => {
          const entry = inFlight.get(input.requestId)!;
          const origin = originOf(input.failure.origin);
          const result = await options.reconcile!({
            request: {
              requestId: input.requestId,
              method: entry.prepared.method,
              url: origin.base + entry.prepared.path,
              origin: origin.id,
              headers: { ...entry.prepared.headers },
              body: entry.prepared.body,
              idempotencyKey: entry.prepared.idempotencyKey,
            },
            failure: input.failure,
            attempts: input.attempts,
          });
          return { ...result, at: clock.now() };
        },
      }),
    },
    { clock, ...(options.inspect === undefined ? {} : { inspect: options.inspect }) },
  );

  async function runAttempt(input: AttemptInput, signal: AbortSignal) {
    const entry = inFlight.get(input.requestId)!;
    const origin = originOf(input.origin);
    const headers: Record<string, string> = { ...entry.prepared.headers };
    if (origin.credentials === 'omit') {
      // Credentials the app put on the request itself must not reach an origin that may not have them either.
      for (const name of CREDENTIAL_HEADERS) delete headers[name];
    }
    let authGeneration: number | undefined;
    if (auth && origin.credentials === 'send') {
      try {
        const credentials = await auth.headers(origin.id);
        authGeneration = credentials.generation;
        for (const [name, value] of Object.entries(credentials.headers)) headers[name.toLowerCase()] = value;
      } catch {
        const result: TransportResult = {
          kind: 'error',
          phase: 'unknown',
          requestSent: 'no',
          message: 'auth.headers() threw; nothing was sent',
        };
        return { ...result, at: clock.now() };
      }
    }
    if (input.idempotencyKey !== undefined)
      headers[policy.idempotency.header.toLowerCase()] = input.idempotencyKey;
    if (policy.attemptHeader !== false) {
      headers[policy.attemptHeader.toLowerCase()] = `attempt=${input.attempt}; max=${input.attemptsMax}`;
    }
    const result = await transport.send({
      url: origin.base + entry.prepared.path,
      method: entry.prepared.method,
      headers,
      body: entry.prepared.body,
      signal,
      connectTimeoutMs: Math.min(policy.timeouts.connectMs, input.timeoutMs),
      attemptsLeft: input.attemptsLeft,
    });
    return { ...result, at: clock.now(), authGeneration };
  }

  function emit(event: DecisionEvent) {
    if (!options.onEvent) return;
    try {
      options.onEvent(redactEvent(event));
    } catch {
      // An observer's bug must not change what happens to a request.
    }
  }

  async function request(request: FailoverRequest, extraFields?: ReadonlySet<string>): Promise<Outcome> {
    if (closed)
      throw new FailwiseError('failwise: this client is closed; create a new one with createFailoverClient');
    const prepared = prepareRequest(request, generateKey, extraFields);
    const requestId = `r${++nextRequestNumber}`;
    const startedAt = clock.now();
    const firstOrigin = origins[0]!;
    const base = { requestId, method: prepared.method, path: prepared.path };
    const describe = (originId: string | undefined, attempt: number) => {
      const origin = originId === undefined ? undefined : originsById.get(originId);
      return {
        ...base,
        origin: origin?.id ?? '',
        host: origin?.host ?? '',
        attempt,
        elapsedMs: clock.now() - startedAt,
      };
    };
    const onEmitted = (event: RequestMachineEmitted) => {
      const failure = event.type === 'attempt-started' ? undefined : event.failure;
      emit({
        ...describe(event.origin, event.attempt),
        type: event.type,
        failureClass: failure?.class,
        requestSent: failure?.requestSent,
        status: failure?.status,
        retryAfterMs: failure?.retryAfterMs,
        delayMs: event.type === 'retry-scheduled' ? event.delayMs : undefined,
      });
    };

    const finish = (output: RequestMachineOutput): Outcome => {
      const elapsedMs = clock.now() - startedAt;
      const common = describe(output.origin, output.attempts);
      if (output.status === 'succeeded') {
        emit({ type: 'succeeded', ...common });
        return { ...output, elapsedMs };
      }
      if (output.status === 'deferred') {
        // Only durable work defers, and durable work needs the outbox (not in this version).
        throw new FailwiseError('failwise: a request was deferred without an outbox');
      }
      emit({ type: 'failed', ...common, reason: output.reason, failureClass: output.failure?.class });
      return { ...output, elapsedMs };
    };

    const entry: InFlight = { prepared };
    inFlight.set(requestId, entry);
    try {
      const running = driver.run(
        {
          requestId,
          method: prepared.method,
          origins: [firstOrigin.id],
          write: prepared.write,
          idempotencyKey: prepared.idempotencyKey,
          policy,
          budgetMs: prepared.deadlineMs ?? policy.budgetMs,
          startedAt,
          canRefreshAuth: auth !== undefined,
          canReconcile: options.reconcile !== undefined,
          deferrable: false,
          random,
        },
        onEmitted,
      );
      entry.running = running;
      const signal = prepared.signal;
      const onAbort = () => running.cancel();
      if (signal?.aborted) running.cancel();
      else signal?.addEventListener('abort', onAbort, { once: true });
      try {
        return finish(await running.done);
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
    } finally {
      inFlight.delete(requestId);
    }
  }

  return {
    policy,
    request: (req) => request(req),
    async fetch(path, init = {}) {
      const outcome = await request({ ...init, path }, FETCH_ONLY_FIELDS);
      if (outcome.status === 'succeeded') return outcome.response;
      throw new RequestFailedError(outcome);
    },
    async close() {
      if (closed) return;
      closed = true;
      const pending = [...inFlight.values()];
      for (const entry of pending) entry.running?.cancel();
      await Promise.allSettled(pending.flatMap((entry) => (entry.running ? [entry.running.done] : [])));
      await transport.close?.();
    },
  };
}
