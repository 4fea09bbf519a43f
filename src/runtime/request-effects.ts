import type {
  AttemptInput,
  AttemptOutput,
  ChooseOriginInput,
  ChooseOriginOutput,
  ClaimRetryOutput,
  ReconcileInput,
  ReconcileOutput,
  RefreshAuthInput,
  RefreshAuthOutput,
} from '../../machines/request/request.types.js';
import type { Clock } from '../clock/clock.js';
import type { ConnectivitySource } from '../connectivity/connectivity-source.js';
import { attemptOrigin, type OriginChooser } from '../policy/attempt-origin.js';
import { isSafeMethod } from '../policy/methods.js';
import type { Policy } from '../policy/policy.js';
import type { TransportErrorPhase, TransportResult } from '../policy/transport-result.js';
import type { Transport } from '../transports/transport.js';
import type { AuthCoordinator } from './auth-coordinator.js';
import type { ReconcileHook } from './client-options.js';
import { CREDENTIAL_HEADERS, type PreparedRequest } from './prepare-request.js';
import type { RetrySlots } from './retry-slots.js';
import type { ServerHolds } from './server-holds.js';
import { StampedAttempt } from './stamped-attempt.js';
import type { TelemetryRun } from './telemetry.js';
import type { ResolvedOrigin } from './validate-client-options.js';

/** The request an effect answers for: its own object (request-run.ts), handed over by the request itself. */
export interface EffectRequest {
  readonly requestId: string;
  readonly prepared: PreparedRequest;
  readonly trace: TelemetryRun | undefined;
}

/** The client's parts the request machine's effects need. */
export interface RequestEffectsParts {
  clock: Clock;
  transport: Transport;
  policy: Policy;
  originsById: ReadonlyMap<string, ResolvedOrigin>;
  origins: OriginChooser;
  holds: ServerHolds;
  retrySlots: RetrySlots;
  /** The requests in progress (durable sends included): their number is the retry budget's share. */
  inFlight: ReadonlySet<unknown>;
  auth: AuthCoordinator | undefined;
  reconcile: ReconcileHook | undefined;
  connectivity: ConnectivitySource | undefined;
}

/**
 * What the request machine asks of the client, answered for one request at a time: an origin, a retry slot, an
 * attempt (headers, credentials, the transport), a refresh of credentials and a reconcile of an unknown write.
 * One per client; each request hands itself over (its `RequestRun` methods call these), so nothing looks a
 * request up by id. The origin choice and the retry claim answer at once (the lean executor hands the answer
 * back without a tick).
 */
export class RequestEffects {
  private readonly clock: Clock;
  private readonly transport: Transport;
  private readonly policy: Policy;
  private readonly originsById: ReadonlyMap<string, ResolvedOrigin>;
  private readonly origins: OriginChooser;
  private readonly holds: ServerHolds;
  private readonly retrySlots: RetrySlots;
  private readonly inFlight: ReadonlySet<unknown>;
  private readonly auth: AuthCoordinator | undefined;
  private readonly reconcileHook: ReconcileHook | undefined;
  private readonly connectivity: ConnectivitySource | undefined;

  constructor(parts: RequestEffectsParts) {
    this.clock = parts.clock;
    this.transport = parts.transport;
    this.policy = parts.policy;
    this.originsById = parts.originsById;
    this.origins = parts.origins;
    this.holds = parts.holds;
    this.retrySlots = parts.retrySlots;
    this.inFlight = parts.inFlight;
    this.auth = parts.auth;
    this.reconcileHook = parts.reconcile;
    this.connectivity = parts.connectivity;
  }

  /** Rule 6: nothing is sent while the connectivity source says offline. */
  isOffline(): boolean {
    return this.connectivity?.current() === 'offline';
  }

  /** The origin of the request's next attempt (attempt-origin.ts), with the server hold on it. */
  chooseOrigin(request: EffectRequest, input: ChooseOriginInput): ChooseOriginOutput {
    // Only safe methods (GET, HEAD, OPTIONS, TRACE) may go to an origin that accepts reads only.
    const write = !isSafeMethod(request.prepared.method);
    return attemptOrigin(input, write, this.origins, this.holds, this.clock.now());
  }

  /** A slot of the client's retry budget; every request in progress counts toward its share. */
  claimRetry(request: EffectRequest): ClaimRetryOutput {
    return { granted: this.retrySlots.claim(request.requestId, this.inFlight.size), at: this.clock.now() };
  }

  /** One attempt: the request's headers, credentials where allowed, then the transport. */
  attempt(request: EffectRequest, input: AttemptInput, signal: AbortSignal): PromiseLike<AttemptOutput> {
    const origin = this.originsById.get(input.origin)!;
    if (this.isOffline()) return Promise.resolve(this.sentNothingOffline());
    // A copy the attempt may add to, over Object.keys: most requests have no headers, and on Hermes a for-in over
    // an empty object costs several times Object.keys (a spread costs more still).
    const given = request.prepared.headers;
    const headers: Record<string, string> = {};
    const names = Object.keys(given);
    for (let i = 0; i < names.length; i++) headers[names[i]!] = given[names[i]!]!;
    if (origin.credentials === 'omit') {
      // Credentials the app put on the request itself must not reach an origin that may not have them either.
      for (const name of CREDENTIAL_HEADERS) delete headers[name];
      return this.send(request, input, signal, origin, headers, undefined);
    }
    const { auth } = this;
    if (!auth) return this.send(request, input, signal, origin, headers, undefined);
    return Promise.resolve()
      .then(() => auth.headers(origin.id))
      .then(
        (credentials) => {
          // The device may have gone offline while the credentials were fetched.
          if (this.isOffline()) return this.sentNothingOffline();
          for (const [name, value] of Object.entries(credentials.headers))
            headers[name.toLowerCase()] = value;
          return this.send(request, input, signal, origin, headers, credentials.generation);
        },
        () => this.nothingSent('unknown', 'auth.headers() threw; nothing was sent'),
      );
  }

  /** New credentials, shared by every request that got a 401 to the same ones (auth-coordinator.ts). */
  async refreshAuth(request: EffectRequest, input: RefreshAuthInput): Promise<RefreshAuthOutput> {
    request.trace?.note({ type: 'auth-refresh', origin: input.origin }, this.clock.now());
    await this.auth!.refresh(input.authGeneration);
    return { at: this.clock.now() };
  }

  /** The app's `reconcile` hook, asked whether a write whose outcome is unknown was applied. */
  async reconcile(request: EffectRequest, input: ReconcileInput): Promise<ReconcileOutput> {
    const { prepared, requestId } = request;
    const { failure, attempts } = input;
    const origin = this.originsById.get(failure.origin)!;
    const asked = { ...prepared, requestId, url: origin.base + prepared.path, origin: origin.id };
    const result = await this.reconcileHook!({ request: asked, failure, attempts });
    request.trace?.note({ type: 'reconcile', result: result.status }, this.clock.now());
    return Object.assign({}, result, { at: this.clock.now() });
  }

  /** Sends the attempt with its headers complete: the key, the attempt header, the trace's context. */
  private send(
    request: EffectRequest,
    input: AttemptInput,
    signal: AbortSignal,
    origin: ResolvedOrigin,
    headers: Record<string, string>,
    authGeneration: number | undefined,
  ): PromiseLike<AttemptOutput> {
    const { prepared, trace } = request;
    const { policy } = this;
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
      this.transport.send({
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
      this,
      authGeneration,
    );
  }

  /** A transport's result as the machine reads it: when it came, and the credentials' generation it was sent with. */
  output(result: TransportResult, authGeneration?: number): AttemptOutput {
    // A copy by hand, then the two fields: Object.assign with a second source costs Hermes (no JIT) about 1 µs,
    // and a spread that adds keys takes V8 (Node 20) a slow path; this costs both less.
    const output: Record<string, unknown> = {};
    for (const key in result)
      if (Object.prototype.hasOwnProperty.call(result, key))
        output[key] = result[key as keyof TransportResult];
    output.at = this.clock.now();
    output.authGeneration = authGeneration;
    return output as AttemptOutput;
  }

  /** An attempt that ended before anything was sent, as a transport would report it. */
  private nothingSent(phase: TransportErrorPhase, message: string): AttemptOutput {
    const result: TransportResult = { kind: 'error', phase, requestSent: 'no', message };
    return Object.assign({}, result, { at: this.clock.now() });
  }

  private sentNothingOffline(): AttemptOutput {
    return this.nothingSent('offline', 'the connectivity source reports offline; nothing was sent');
  }
}
