import { attemptTimeoutMs } from '../../machines/request/request.actions.js';
import type {
  AttemptOutput,
  ChooseOriginInput,
  ChooseOriginOutput,
  ClaimRetryOutput,
  ReconcileInput,
  ReconcileOutput,
  RefreshAuthInput,
  RefreshAuthOutput,
  RequestMachineContext,
} from '../../machines/request/request.types.js';
import { attemptOrigin } from '../policy/attempt-origin.js';
import { isSafeMethod } from '../policy/methods.js';
import type { Policy } from '../policy/policy.js';
import type { TransportErrorPhase } from '../policy/transport-result.js';
import { classifyAttempt, classifyPath } from './classify-attempt.js';
import type { ClassifyRequest } from './client-options.js';
import { CREDENTIAL_HEADERS } from './prepare-request.js';
import type { RequestHost, RequestRun } from './request-run.js';
import { StampedAttempt } from './stamped-attempt.js';
import type { ResolvedOrigin } from './validate-client-options.js';

// What the request machine asks of the client, answered for one request: an origin, a retry slot, an attempt
// (headers, credentials, the transport), a refresh of credentials and a reconcile of an unknown write. Each takes
// the request's own `RequestRun` (its methods named after the machine's actors call these) and finds the client's
// parts on its host: nothing looks a request up by id, and no effect is a closure. The origin choice and the retry
// claim answer at once (the lean executor hands the answer back without a tick).

/** The request an effect answers for: its own run, which reaches the client's parts through its host. */
export type EffectRequest = Pick<RequestRun<unknown>, 'host' | 'requestId' | 'prepared' | 'trace'>;

/** Rule 6: nothing is sent while the connectivity source says offline. */
export function isOffline(host: RequestHost): boolean {
  return host.connectivity?.current() === 'offline';
}

/**
 * The origin of the request's next attempt (attempt-origin.ts), with the server hold on it; when there is none,
 * the wait for a send slot on it (origin-throttles.ts), if the attempt must wait for one.
 */
export function chooseOrigin(run: EffectRequest, input: ChooseOriginInput): ChooseOriginOutput {
  const { host } = run;
  // Only safe methods (GET, HEAD, OPTIONS, TRACE) may go to an origin that accepts reads only.
  const write = !isSafeMethod(run.prepared.method);
  const now = host.clock.now();
  const chosen: ChooseOriginOutput = attemptOrigin(input, write, host.monitor, host.holds, now);
  const { throttles } = host;
  if (throttles === undefined || chosen.origin === undefined) return chosen;
  // The request's first choice, held or not: the client's demand, which sizes its quiet period.
  if (input.attempt === 1 && input.previousOrigin === undefined) throttles.start(chosen.origin, now);
  if (chosen.holdUntil !== undefined) return chosen;
  const wait = throttles.take(
    chosen.origin,
    run.requestId,
    now,
    input.deadline ?? Infinity,
    input.retryAfterMs !== undefined,
  );
  return wait === undefined ? chosen : { origin: chosen.origin, at: now, ...wait };
}

/** A slot of the client's retry budget; every request in progress (durable sends included) counts toward its share. */
export function claimRetry(run: EffectRequest): ClaimRetryOutput {
  const { host } = run;
  return { granted: host.retrySlots.claim(run.requestId, host.inFlight.size), at: host.clock.now() };
}

/**
 * One attempt: the request's headers, credentials where allowed, then the transport. Its origin, number and
 * timeout are the machine's context's as the attempt starts (the context the run's machine runs on).
 */
export function attempt(
  run: EffectRequest,
  context: Readonly<RequestMachineContext>,
  signal: AbortSignal,
): PromiseLike<AttemptOutput> {
  const { host } = run;
  const origin = host.originsById.get(context.origin!)!;
  // Read now: credentials may come after the attempt ended and the next began.
  const n = context.attempts;
  const timeoutMs = attemptTimeoutMs(context);
  const { policy } = context;
  if (isOffline(host)) return Promise.resolve(sentNothingOffline(host));
  // A copy the attempt may add to, over Object.keys: most requests have no headers, and on Hermes a for-in over
  // an empty object costs several times Object.keys (a spread costs more still).
  const given = run.prepared.headers;
  const headers: Record<string, string> = {};
  const names = Object.keys(given);
  for (let i = 0; i < names.length; i++) headers[names[i]!] = given[names[i]!]!;
  if (origin.credentials === 'omit') {
    // Credentials the app put on the request itself must not reach an origin that may not have them either.
    for (const name of CREDENTIAL_HEADERS) delete headers[name];
    return send(run, n, timeoutMs, policy, signal, origin, headers, undefined);
  }
  const { auth } = host;
  if (!auth) return send(run, n, timeoutMs, policy, signal, origin, headers, undefined);
  return Promise.resolve()
    .then(() => auth.headers(origin.id))
    .then(
      (credentials) => {
        // The device may have gone offline while the credentials were fetched.
        if (isOffline(host)) return sentNothingOffline(host);
        for (const [name, value] of Object.entries(credentials.headers)) headers[name.toLowerCase()] = value;
        return send(run, n, timeoutMs, policy, signal, origin, headers, credentials.generation);
      },
      () => nothingSent(host, 'unknown', 'auth.headers() threw; nothing was sent'),
    );
}

/** New credentials, shared by every request that got a 401 to the same ones (auth-coordinator.ts). */
export async function refreshAuth(run: EffectRequest, input: RefreshAuthInput): Promise<RefreshAuthOutput> {
  const { clock, auth } = run.host;
  run.trace?.note({ type: 'auth-refresh', origin: input.origin }, clock.now());
  await auth!.refresh(input.authGeneration);
  return { at: clock.now() };
}

/** The app's `reconcile` hook, asked whether a write whose outcome is unknown was applied. */
export async function reconcile(run: EffectRequest, input: ReconcileInput): Promise<ReconcileOutput> {
  const { host, prepared, requestId } = run;
  const { failure, attempts } = input;
  const origin = host.originsById.get(failure.origin)!;
  const request = { ...prepared, requestId, url: origin.base + prepared.path, origin: origin.id };
  const result = await host.reconcile!({ request, failure, attempts });
  run.trace?.note({ type: 'reconcile', result: result.status }, host.clock.now());
  return Object.assign({}, result, { at: host.clock.now() });
}

/**
 * Sends attempt number `attempt` (of `runPolicy.attempts.max`) with its headers complete: the key, the attempt
 * header, the trace's context.
 */
function send(
  run: EffectRequest,
  attempt: number,
  timeoutMs: number,
  runPolicy: Readonly<Policy>,
  signal: AbortSignal,
  origin: ResolvedOrigin,
  headers: Record<string, string>,
  authGeneration: number | undefined,
): PromiseLike<AttemptOutput> {
  const { host, prepared, trace } = run;
  const { policy } = host;
  // The timeouts and attempts are the request's own (its policy over its route's over the client's, which its
  // machine runs by); the headers the client's.
  const { timeouts, attempts } = runPolicy;
  // The key comes from the runtime's own copy of the request: the machine knows only that there is one.
  if (prepared.idempotencyKey !== undefined)
    headers[policy.idempotency.header.toLowerCase()] = prepared.idempotencyKey;
  if (policy.attemptHeader) {
    headers[policy.attemptHeader.toLowerCase()] = `attempt=${attempt}; max=${attempts.max}`;
  }
  // The attempt's span context (`traceparent`, ...), so that the server's spans join the trace.
  if (trace?.inject) trace.inject(attempt, headers);
  const sent = host.transport.send({
    url: origin.base + prepared.path,
    method: prepared.method,
    headers,
    body: prepared.body,
    signal,
    connectTimeoutMs: Math.min(timeouts.connectMs, timeoutMs),
    attemptsLeft: attempts.max - attempt + 1,
    pins: origin.pins,
    fetchOptions: prepared.fetchOptions,
    stream: prepared.stream,
    idleMs: timeouts.idleMs,
    // The caller's signal ends a body handed over as a stream after the attempt ended (docs/transports.md).
    bodySignal: prepared.signal,
  });
  // Stamped in the reaction that hands the result to the machine, not in a `then` of its own (stamped-attempt.ts);
  // without a `classify` the success path costs this one check.
  const { classify } = host;
  return new StampedAttempt(
    classify === undefined ? sent : classifyAttempt(sent, classify, classifyRequest(run, origin.id), attempt),
    host,
    authGeneration,
    origin.id,
  );
}

/** The request as the app's `classify` sees it: no headers, no body, no query. */
function classifyRequest(run: EffectRequest, origin: string): ClassifyRequest {
  const { method, path, route } = run.prepared;
  return { method, path: classifyPath(path), origin, route };
}

/** An attempt that ended before anything was sent, as a transport would report it. */
function nothingSent(host: RequestHost, phase: TransportErrorPhase, message: string): AttemptOutput {
  return { kind: 'error', phase, requestSent: 'no', message, at: host.clock.now() };
}

function sentNothingOffline(host: RequestHost): AttemptOutput {
  return nothingSent(host, 'offline', 'the connectivity source reports offline; nothing was sent');
}
