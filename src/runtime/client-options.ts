import type { MachineRunner } from '../engine/machine-runner.js';
import type { Clock } from '../clock/clock.js';
import type { ConnectivitySource } from '../connectivity/connectivity-source.js';
import type { ClassifyVerdict } from '../policy/classify-verdict.js';
import type { Failure, FailureClass, RequestSent } from '../policy/failure.js';
import type { TransportErrorPhase } from '../policy/transport-result.js';
import type { OutboxStore } from '../stores/outbox-store.js';
import type { ResponseCache } from '../cache/response-cache.js';
import type { Policy, PolicyInput } from '../policy/policy.js';
import type { Route } from '../policy/routes.js';
import type { Transport } from '../transports/transport.js';
import type { AuthProvider } from './auth-coordinator.js';
import type { DecisionEvent } from './decision-events.js';
import type { IsIdempotent } from './prepare-request.js';
import type { Telemetry } from './telemetry.js';

/** One API origin: where requests go. The first is the primary. */
export interface OriginConfig {
  /** A short name used in outcomes and decision events, e.g. `primary`. Unique. */
  id: string;
  /** The origin's base URL, `https:` unless `allowInsecure`; request paths are joined to it. */
  url: string;
  /**
   * Allows an `http:` URL (rule 8): for loopback development servers, never for production.
   * @default false
   */
  allowInsecure?: boolean;
  /**
   * Whether `auth` headers go to this origin (rule 8): `omit` for a third-party backup that must
   * never see your tokens.
   * @default 'send'
   */
  credentials?: 'send' | 'omit';
  /**
   * What this origin may be sent: `reads` for a read replica or a cache that must never get a write. Only
   * GET, HEAD, OPTIONS and TRACE go to it; any other method skips it, and ends `no-healthy-origin` when no
   * origin that takes it is usable.
   * @default 'all'
   */
  accepts?: 'all' | 'reads';
  /**
   * Certificate pins, checked on every connection by transports that can (`nodeHttpTransport`): SPKI
   * SHA-256 pins as OkHttp writes them, `'sha256/' + base64(SHA-256(DER SubjectPublicKeyInfo))`, e.g.
   * `openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256
   * -binary | base64`. A handshake whose chain (leaf, intermediates or root) has none of these keys fails
   * with class `tls`, which fails over at once. Pins are checked on top of the CA check, not instead.
   * Give a backup pin (a key not yet in use) to rotate certificates without an outage. When any origin
   * has pins, every origin must (a failover host without them would turn failover into an outage), the
   * origin must be `https:`, and the transport must check pins (`transport.checksPins`), else
   * `createFailoverClient` throws `PolicyError`. docs/transports.md, "Certificate pins".
   * @default none: no pinning
   */
  pins?: readonly string[];
}

/**
 * How the primary is checked before traffic fails back to it: a request (sent with no credentials, no
 * retries, within `policy.health.probeTimeoutMs`) that succeeds when the origin answers with a status below
 * 500 other than 429; or the app's own check, resolving `true` when the primary is fit to take traffic.
 * @default { method: 'HEAD', path: '/' }
 */
export type ProbeOption =
  | { method?: 'GET' | 'HEAD'; path?: string }
  | ((origin: { id: string; url: string }, signal: AbortSignal) => Promise<boolean>);

/** The request as the `reconcile` hook sees it. */
export interface ReconcileRequest {
  requestId: string;
  method: string;
  /** The full URL the write went to. */
  url: string;
  origin: string;
  headers: Record<string, string>;
  body?: string | Uint8Array | undefined;
  idempotencyKey?: string | undefined;
}

export type ReconcileResult =
  { status: 'applied'; response?: Response } | { status: 'not-applied' } | { status: 'unknown' };

/** Asks the server what became of a write whose outcome is unknown (rule 2). */
export type ReconcileHook = (args: {
  request: ReconcileRequest;
  failure: Failure;
  attempts: number;
}) => Promise<ReconcileResult>;

/** The request as the client's `classify` sees it: a description, never its headers, body or query. */
export interface ClassifyRequest {
  readonly method: string;
  /** The path without its query and fragment. */
  readonly path: string;
  /** The id of the origin the attempt went to. */
  readonly origin: string;
  /** The route that gave the request its policy: its `id`, else its index in `routes`; none without one. */
  readonly route?: string | number | undefined;
}

/** A transport error as the client's `classify` sees it. */
export interface ClassifyError {
  /** How failwise classifies it. */
  readonly class: FailureClass;
  readonly phase: TransportErrorPhase;
  /** Whether the request may have reached the server; the app's class never changes it. */
  readonly requestSent: RequestSent;
  /** A short description with no header values, tokens, bodies or query strings. */
  readonly message: string;
  /** The low-level code, e.g. `ECONNREFUSED`, when the transport gave one. */
  readonly code?: string | undefined;
}

/**
 * The app's own classifier, asked about every attempt that got a response or an error, before failwise decides:
 * a failure class, `'success'`, or `undefined` (failwise classifies as usual); sync or async. It reads a body
 * through `response.clone()`, so the app still gets it whole. What it throws (or a value of any other kind) fails
 * the attempt as `unexpected`. It changes whether an attempt is retried, never whether a write may be replayed.
 */
export type ClassifyHook = (args: {
  request: ClassifyRequest;
  /** The attempt's number, from 1. */
  attempt: number;
  response?: Response;
  error?: ClassifyError;
}) => ClassifyVerdict | undefined | PromiseLike<ClassifyVerdict | undefined>;

/**
 * What runs the client's machines when they are watched: `withInspector(observer)` from failwise/machines
 * (real XState actors, with the observer on every one). Without it they run in the lean executor.
 */
export interface InspectOption {
  readonly runner: MachineRunner;
}

export interface FailoverClientOptions {
  origins: readonly OriginConfig[];
  /** Any part of a policy; the rest comes from the documented defaults (docs/policy.md). */
  policy?: PolicyInput | Policy;
  /**
   * Kinds of call, each with its own request policy (`attempts`, `budgetMs`, `timeouts`, `backoff`,
   * `retryableStatuses`, `retryAfter`) laid over `policy`: the first route whose `match` fits a request gives
   * it. The origins' health, server holds, the retry budget and durable work stay the client's, shared by
   * every route (docs/policy.md#routes).
   */
  routes?: readonly Route[];
  /** @default fetchTransport() */
  transport?: Transport;
  /** @default systemClock */
  clock?: Clock;
  auth?: AuthProvider;
  reconcile?: ReconcileHook;
  /**
   * The app's own verdict on each attempt (a GraphQL `errors` array in a 200, a problem type, a transient 401):
   * a failure class, `'success'` or `undefined` for failwise's own (docs/policy.md#the-apps-own-classifier).
   * Runs within the attempt, bounded by its timeout. @default none: failwise classifies every attempt
   */
  classify?: ClassifyHook;
  /**
   * Says whether a request that has no `idempotent` field of its own is safe to replay: `true` (retried and
   * failed over as a read), `false` (a write: rule 2), `undefined` (left to its method). Handed the
   * request's method, path, headers and body. `isGraphQLQuery` says `true` for a GraphQL query sent as a POST.
   * A function that throws or answers anything else rejects the request with `RequestError`.
   */
  isIdempotent?: IsIdempotent;
  /**
   * Receives every decision, redacted (rule 9). An exception thrown here never changes a request's
   * outcome: it goes to `onEventError`.
   */
  onEvent?: (event: DecisionEvent) => void;
  /**
   * Receives what `onEvent` threw, with the event it threw on.
   * @default the host's `reportError(error)` (browsers, Deno, Bun), else `console.error`
   */
  onEventError?: (error: unknown, event: DecisionEvent) => void;
  /**
   * Runs every machine as a real XState actor, watched by this observer: `withInspector(observer)` from
   * failwise/machines, e.g. `withInspector(createBrowserInspector().inspect)` (docs/inspect.md).
   */
  inspect?: InspectOption;
  /**
   * Where online/offline hints come from (`browserConnectivity()` in failwise/browser, or `manualConnectivity()`).
   * Hints only schedule work: offline stops sending and keeps failures from counting against an origin;
   * online never marks an origin healthy (rule 6). @default none: always treated as online
   */
  connectivity?: ConnectivitySource;
  /**
   * Where durable work is kept (rule 10). The default, `memoryStore()`, keeps it only while the process
   * lives (lost with a crash or restart); for work that must outlive one: `sqliteStore(path)` from failwise/node,
   * `indexedDbStore(name)` from failwise/browser, or your own (docs/stores.md). `client.close()` closes it.
   * @default memoryStore()
   */
  store?: OutboxStore;
  /**
   * Where `lifetime: 'cached'` reads are kept. @default memoryCache({ maxEntries: policy.cache.maxEntries })
   */
  cache?: ResponseCache;
  /**
   * This client's name on the store's lease (only one holder sends at a time). A process restarted after a
   * crash that gives the same name takes its lease back at once. With another name, a crashed holder's lease is
   * free at once on stores whose lease dies with its holder (sqliteStore, indexedDbStore with Web Locks), and
   * runs out after 30 s on the others. Never give two live clients on one store the same name.
   * @default a new random id (`generateIdempotencyKey`, else `crypto.randomUUID`, else time and Math.random)
   */
  outboxOwner?: string;
  /**
   * What sends durable work while every page is closed. `'service-worker'`: after each durable request's entry is
   * stored, the page asks for a Background Sync `sync` event (tag `'failwise-outbox'`) in the service worker that
   * controls it, where `serviceWorkerOutbox` from failwise/service-worker drains the same store once the network
   * is back. Where Background Sync is missing (Firefox, Safari) it does nothing: pages and the worker's start
   * still send (docs/durable.md, "Sent while the app is closed"). @default none
   */
  background?: 'service-worker';
  /** How the primary is probed before failback (docs/failover.md). */
  probe?: ProbeOption;
  /**
   * Randomness for jitter, in [0, 1): the backoff between attempts, and the seed of the health machine's jitter
   * (the wait after a failed probe). @default Math.random
   */
  random?: () => number;
  /**
   * Makes keys for `idempotencyKey: 'auto'` and for durable requests (their key and outbox entry id): give it
   * where `crypto.randomUUID` is missing (React Native's Hermes). Looked up when a key is first needed; without
   * either, that request rejects with a `RequestError` naming this option.
   * @default crypto.randomUUID
   */
  generateIdempotencyKey?: () => string;
  /**
   * Where spans and metrics go: `openTelemetry()` from failwise/otel (docs/telemetry.md). Without it the
   * client does no telemetry work at all. @default none
   */
  telemetry?: Telemetry;
}
