// The `failwise` entry: universal (browsers, React Native, Node >= 20, Deno, Bun), no Node built-ins.
// Exports are listed by name on purpose; anything not here is internal.
export { createFailoverClient } from './runtime/create-failover-client.js';
export type { FailoverClient, FetchInit, ClientOutbox } from './runtime/create-failover-client.js';
export type { FlushResult, FlushReason } from './runtime/flush-result.js';
export type { DrainOptions } from './runtime/drain-options.js';
export type {
  ClassifyError,
  ClassifyHook,
  ClassifyRequest,
  FailoverClientOptions,
  OriginConfig,
  ProbeOption,
  ReconcileHook,
  ReconcileRequest,
  ReconcileResult,
} from './runtime/client-options.js';
export type { FailoverRequest, IsIdempotent, RequestHeaders } from './runtime/prepare-request.js';
export type { ClassifyVerdict } from './policy/classify-verdict.js';
export { isGraphQLQuery } from './policy/graphql-query.js';
export type { IdempotencyQuestion } from './policy/graphql-query.js';
export type { FetchOptions } from './transports/fetch-options.js';
export type { AuthProvider } from './runtime/auth-coordinator.js';
export type {
  DecisionEvent,
  DecisionEventType,
  RequestEvent,
  RequestEventFields,
  AttemptFields,
  FailureFields,
  AttemptStartedEvent,
  AttemptFailedEvent,
  RetryScheduledEvent,
  SucceededEvent,
  FailedEvent,
  DeferredEvent,
  HealthChangedEvent,
  OutboxChangedEvent,
  OutboxChange,
  OutboxEntryFields,
  OutboxSizeChangedEvent,
  OutboxEntrySentEvent,
  OutboxEntryRetryScheduledEvent,
  OutboxEntryDeadLetteredEvent,
  OutboxEntryRevivedEvent,
  OutboxEntryReplacedEvent,
} from './runtime/decision-events.js';
// Left out on purpose: DraftOf, DecisionEventDraft, RequestEventDetails and EmitRequestEvent (how the client
// builds events, before redaction), and WithheldError (only an inspected client's machines see it).
export type { Telemetry } from './runtime/telemetry.js';
export type { HealthState } from '../machines/origin-health/origin-health.types.js';
export type { HealthSnapshot } from './runtime/health-monitor.js';
export type { HealthCriterion } from './policy/health-evidence.js';

export { definePolicy } from './policy/define-policy.js';
export { defaultPolicy } from './policy/defaults.js';
export type { Policy, PolicyInput, Jitter, HealthPolicy, DurablePolicy } from './policy/policy.js';
export type { RequestPolicyInput } from './policy/request-policy.js';
export type { Route } from './policy/routes.js';
export type { Failure, FailureClass, FailReason, RequestSent } from './policy/failure.js';
export type { Outcome } from './policy/outcome.js';

export { fetchTransport } from './transports/fetch-transport.js';
export type {
  Transport,
  TransportRequest,
  TransportResult,
  TransportErrorPhase,
} from './transports/transport.js';

export { systemClock } from './clock/system-clock.js';
export { simulatedClock } from './clock/simulated-clock.js';
export type { Clock } from './clock/clock.js';
export type { SimulatedClock } from './clock/simulated-clock.js';

export { manualConnectivity } from './connectivity/manual-connectivity.js';
export type { ManualConnectivity } from './connectivity/manual-connectivity.js';
export type {
  ConnectivitySource,
  ConnectivityHint,
  ConnectivityState,
} from './connectivity/connectivity-source.js';

export { memoryStore } from './stores/memory-store.js';
export { memoryCache } from './cache/memory-cache.js';
export type { ResponseCache, CachedResponse } from './cache/response-cache.js';
export type {
  OutboxStore,
  OutboxEntry,
  StoredRequest,
  OutboxClaims,
  ClaimRequest,
  ReplacedEntry,
  ClaimAnswer,
} from './stores/outbox-store.js';

export { FailwiseError } from './errors/failwise-error.js';
export { PolicyError } from './errors/policy-error.js';
export type { PolicyIssue } from './errors/policy-error.js';
export { RequestError } from './errors/request-error.js';
export { RequestFailedError } from './errors/request-failed-error.js';
export { ArgumentError } from './errors/argument-error.js';
export { StateError } from './errors/state-error.js';
export { MachineError } from './errors/machine-error.js';
export {
  isFailwiseError,
  isPolicyError,
  isRequestError,
  isRequestFailedError,
} from './errors/type-guards.js';
