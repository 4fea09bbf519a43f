import type { HealthState } from '../../machines/origin-health/origin-health.types.js';
import type { OutboxMachineEmitted } from '../../machines/outbox/outbox.types.js';
import type { RequestMachineEmitted } from '../../machines/request/request.types.js';
import type { Outcome } from '../policy/outcome.js';
import type { RunOutput } from './durable-entry.js';

/**
 * The client's `telemetry` option: what `openTelemetry()` from failwise/otel returns (docs/telemetry.md).
 * The client calls these hooks and nothing else, so its core never imports an OpenTelemetry package; without
 * the option it makes no call at all. Every argument is redacted already: ids, methods, paths without their
 * query, classes, counts, delays and times (rule 9).
 */
export interface Telemetry {
  /** Called once by `createFailoverClient`; what it returns hears that client. */
  start(client: TelemetryClient): TelemetrySession;
}

/** What a telemetry session knows of its client. Every time a hook gets (`at`) is on the client's clock. */
export interface TelemetryClient {
  /** The origins, by id, with their base URLs (no query, no credentials: validate-client-options.ts). */
  origins: ReadonlyArray<{ id: string; base: string }>;
}

/** A request as telemetry sees it: never its query, headers, body or idempotency key. */
export interface TelemetryRequest {
  /** `r1`, `r2`, … or, for durable work, the outbox entry's id. */
  requestId: string;
  method: string;
  /** The path without its query or fragment. */
  path: string;
  lifetime: 'interactive' | 'durable' | 'cached';
  /** The client's route that gave the request its policy: its `id`, else its index; none without one. */
  route?: string | number | undefined;
}

/**
 * How a request (or one send of a durable entry) ended: its outcome (telemetry reads its status, reason,
 * attempts, failure class and response status, nothing more), or `rejected` when `client.request` rejected
 * (a store that could not take a durable request), with the error's name.
 */
export type TelemetryEnd = Outcome | RunOutput | { status: 'rejected'; error: string };

/** Something that happened to a request between its attempts. */
export type TelemetryNote =
  | { type: 'auth-refresh'; origin: string }
  | { type: 'reconcile'; result: 'applied' | 'not-applied' | 'unknown' };

/** One request, or one send of a durable entry: the span its attempts belong to. */
export interface TelemetryRun {
  /** What the request machine emitted for this run (attempts, retries), as it happened. */
  emitted(event: RequestMachineEmitted): void;
  note(note: TelemetryNote, at: number): void;
  /**
   * Adds the headers that carry attempt `attempt`'s trace context to the server (the registered propagator's:
   * `traceparent`, ...) to that attempt's request headers, as HTTP client instrumentations do, so that the
   * server's spans join the trace. Those headers are sent, never put in an event or a log (rule 9).
   */
  inject?(attempt: number, headers: Record<string, string>): void;
  /** Ends the run; nothing is heard of it after this. */
  end(end: TelemetryEnd, at: number): void;
}

/** One client's telemetry. */
export interface TelemetrySession {
  /** A `client.request` began. */
  request(request: TelemetryRequest, at: number): TelemetryRun;
  /**
   * The outbox began a send of an entry: under `during` while the durable request that made the entry still
   * waits for it, otherwise a run of its own, linked to that request where this session saw it.
   */
  send(request: TelemetryRequest, at: number, during?: TelemetryRun): TelemetryRun;
  healthChanged(from: HealthState, to: HealthState, origin: string | undefined, at: number): void;
  /** What the outbox machine emitted: its size, sends and dead letters. */
  outbox(event: OutboxMachineEmitted): void;
}
