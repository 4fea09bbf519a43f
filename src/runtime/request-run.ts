import type { Clock } from '../clock/clock.js';
import type { Failure } from '../policy/failure.js';
import type { Outcome } from '../policy/outcome.js';
import type { RequestMachineEmitted, RequestMachineOutput } from '../../machines/request/request.types.js';
import type { DecisionEventDraft, RequestEvent, RequestEventDetails } from './decision-events.js';
import type { RunOutput } from './durable-entry.js';
import type { HealthMonitor } from './health-monitor.js';
import type { PreparedRequest } from './prepare-request.js';
import type { RequestObserver, RunningRequest } from './request-driver.js';
import type { RetrySlots } from './retry-slots.js';
import type { ServerHolds } from './server-holds.js';
import type { TelemetryRun } from './telemetry.js';

/** What every request of one client shares: the client's own parts that a request reports to. */
export interface RequestHost {
  readonly clock: Clock;
  /** Whether the app listens to decision events (`onEvent`): without it none is built. */
  readonly wantsEvents: boolean;
  notify(event: DecisionEventDraft): void;
  readonly originsById: ReadonlyMap<string, { id: string; host: string }>;
  readonly monitor: Pick<HealthMonitor, 'report'>;
  readonly holds: ServerHolds;
  /** The requests in flight, by id. */
  readonly inFlight: Map<string, RequestRun<unknown>>;
  readonly retrySlots: RetrySlots;
}

/**
 * One request in flight (or one send of an outbox entry): its decision events, what its machine emits, and its end.
 * One object per request, observing its machine run and listening to the caller's signal itself (`handleEvent`),
 * its methods on the prototype: a request in flight holds no closures of its own (bench/memory.ts).
 */
export class RequestRun<T = RunOutput> implements RequestObserver<T | undefined> {
  running: RunningRequest<T | undefined> | undefined = undefined;
  /** Every failure of its attempts, when asked for (an outbox entry keeps all of a send's, not only the last). */
  failures: Failure[] | undefined = undefined;
  /** The caller's signal, once the run listens to it. */
  signal: AbortSignal | undefined = undefined;

  constructor(
    readonly host: RequestHost,
    readonly requestId: string,
    readonly prepared: PreparedRequest,
    readonly startedAt: number,
    readonly trace: TelemetryRun | undefined,
  ) {}

  /**
   * The request begins: it is in flight, and `signal` (the caller's) cancels it. It listens before its run starts,
   * so that a run that ends as it starts (no usable origin) takes the listener off again as it ends (`ended`).
   */
  begin(signal: AbortSignal | undefined): void {
    this.host.inFlight.set(this.requestId, this);
    if (signal === undefined) return;
    // The record listens itself (`handleEvent`): no closure per request.
    this.signal = signal;
    signal.addEventListener('abort', this, { once: true });
  }

  /** A decision event of this request, with the fields every one of its events carries (when the app listens). */
  emit<E extends RequestEvent['type']>(
    type: E,
    originId: string | undefined,
    attempt: number | undefined,
    details: RequestEventDetails<E>,
  ): void {
    const { host } = this;
    if (!host.wantsEvents) return;
    const origin = host.originsById.get(originId ?? '');
    // The fields of `type` come typed from the caller; the request's own are the same for every type.
    host.notify(
      Object.assign({}, details, {
        type,
        requestId: this.requestId,
        method: this.prepared.method,
        path: this.prepared.path,
        origin: origin?.id,
        host: origin?.host,
        attempt,
        elapsedMs: host.clock.now() - this.startedAt,
      }) as DecisionEventDraft,
    );
  }

  /** What the machine emitted: told to telemetry, the origin set's health, the server holds and the app. */
  emitted(event: RequestMachineEmitted): void {
    const { host } = this;
    if (this.trace !== undefined) this.trace.emitted(event);
    if (event.type === 'attempt-failed' && this.failures !== undefined) this.failures.push(event.failure);
    // A 429/503 with Retry-After holds its origin back for every request of the client, from now:
    // before this request (or any other) chooses the origin of its next attempt.
    const holdUntil =
      event.type === 'attempt-failed' && event.failure.retryAfterMs !== undefined
        ? host.holds.note(event.failure, event.at)
        : undefined;
    // Every attempt's outcome feeds the origin set's health; a success is not a decision event.
    if (event.type === 'attempt-succeeded') {
      host.monitor.report({
        type: 'attempt.succeeded',
        origin: event.origin,
        latencyMs: event.latencyMs,
        at: event.at,
      });
      return;
    }
    // An attempt the request's own budget cut short was given less than attemptMs, one in flight across a network
    // change broke with the old network, and one whose transport threw failed on the device: none is evidence
    // against the origin.
    if (
      event.type === 'attempt-failed' &&
      event.cutByBudget !== true &&
      event.acrossChange !== true &&
      event.crashed !== true
    ) {
      const { failure } = event;
      host.monitor.report({
        type: 'attempt.failed',
        origin: failure.origin,
        failureClass: failure.class,
        status: failure.status,
        requestSent: failure.requestSent,
        at: event.at,
      });
    }
    if (!host.wantsEvents) return;
    if (event.type === 'attempt-started') return this.emit(event.type, event.origin, event.attempt, {});
    if (event.type === 'waiting-for-hold')
      return this.emit(event.type, event.origin, event.attempt, {
        delayMs: event.delayMs,
        holdUntil: event.holdUntil,
      });
    const { failure } = event;
    const failed = {
      failureClass: failure.class,
      requestSent: failure.requestSent,
      status: failure.status,
      retryAfterMs: failure.retryAfterMs,
    };
    if (event.type === 'retry-scheduled')
      this.emit(event.type, event.origin, event.attempt, Object.assign(failed, { delayMs: event.delayMs }));
    else
      this.emit(
        event.type,
        event.origin,
        event.attempt,
        Object.assign(failed, {
          reason: event.cutByBudget ? ('budget-exhausted' as const) : undefined,
          acrossChange: event.acrossChange,
        }),
      );
    if (holdUntil !== undefined)
      host.notify({
        type: 'origin-held',
        origin: failure.origin,
        host: host.originsById.get(failure.origin)?.host ?? '',
        status: failure.status!,
        retryAfterMs: failure.retryAfterMs!,
        holdUntil,
        requestId: this.requestId,
      });
  }

  /**
   * When the machine ends: the request's bookkeeping, then what the run resolves with (`outcome`). Durable work is
   * deferred by the outbox, not by this machine (`deferrable: false`): never `deferred` here.
   */
  ended(output: RequestMachineOutput | undefined): T | undefined {
    const { host } = this;
    if (this.signal) this.signal.removeEventListener('abort', this);
    host.inFlight.delete(this.requestId);
    // A request that began retrying holds its slot until it ends.
    host.retrySlots.release(this.requestId);
    return output === undefined ? undefined : this.outcome(output as RunOutput);
  }

  /** What the run resolves with, from the machine's output: the output itself (an outbox entry's send). */
  protected outcome(output: RunOutput): T {
    return output as T;
  }

  /** The caller's signal aborted: the request ends at once, `cancelled`. */
  handleEvent(): void {
    this.running?.cancel();
  }
}

/** An interactive request: it resolves with its outcome, and its end is a decision event. */
export class InteractiveRun extends RequestRun<Outcome> {
  protected override outcome(output: RunOutput): Outcome {
    if (output.status === 'succeeded') this.emit('succeeded', output.origin, output.attempts, {});
    else
      this.emit('failed', output.origin, output.attempts, {
        reason: output.reason,
        failureClass: output.failure?.class,
      });
    const now = this.host.clock.now();
    if (this.trace) this.trace.end(output, now);
    // A copy by hand (the machine's output is a plain object of its own keys), then the time: cheaper than
    // Object.assign on Hermes and than a spread that adds a key on V8.
    const outcome: Record<string, unknown> = {};
    for (const key in output) outcome[key] = output[key as keyof RunOutput];
    outcome.elapsedMs = now - this.startedAt;
    return outcome as unknown as Outcome;
  }
}
