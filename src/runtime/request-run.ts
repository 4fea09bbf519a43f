import type { Clock } from '../clock/clock.js';
import type { LeanEnd } from '../engine/lean-actor.js';
import type { MachineRun, PreparedMachine, RunObserver } from '../engine/machine-runner.js';
import { MachineError } from '../errors/machine-error.js';
import { attemptEvidence } from '../policy/attempt-evidence.js';
import { cancelledBeforeStart } from '../policy/classify-failure.js';
import type { Failure } from '../policy/failure.js';
import type { Outcome } from '../policy/outcome.js';
import type { Policy } from '../policy/policy.js';
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
  RequestMachineEmitted,
  RequestMachineInput,
  RequestMachineOutput,
} from '../../machines/request/request.types.js';
import type { DecisionEventDraft, RequestEvent, RequestEventDetails } from './decision-events.js';
import type { RunOutput } from './durable-entry.js';
import type { HealthMonitor } from './health-monitor.js';
import type { PreparedRequest } from './prepare-request.js';
import * as effects from './request-effects.js';
import type { RetrySlots } from './retry-slots.js';
import type { OriginThrottles } from './origin-throttles.js';
import type { ServerHolds } from './server-holds.js';
import type { TelemetryRun } from './telemetry.js';
import type { ResolvedOrigin } from './validate-client-options.js';
import type { AuthCoordinator } from './auth-coordinator.js';
import type { ClassifyHook, ReconcileHook } from './client-options.js';
import type { ConnectivitySource } from '../connectivity/connectivity-source.js';
import type { Transport } from '../transports/transport.js';

/** What every request of one client shares: the client's own parts that a request reports to and asks of. */
export interface RequestHost {
  readonly clock: Clock;
  /** Whether the app listens to decision events (`onEvent`): without it none is built. */
  readonly wantsEvents: boolean;
  notify(event: DecisionEventDraft): void;
  readonly originsById: ReadonlyMap<string, ResolvedOrigin>;
  /** The origin set's health: it hears each attempt's evidence, and chooses the origin of the next. */
  readonly monitor: Pick<HealthMonitor, 'report' | 'choose' | 'chooseUnheld'>;
  readonly holds: ServerHolds;
  /** Each origin's send slots (policy.throttle); none when the client's policy turns them off. */
  readonly throttles: OriginThrottles | undefined;
  /** The requests in flight: connectivity hints and close() reach each; nothing looks one up. */
  readonly inFlight: Set<InFlightRequest>;
  readonly retrySlots: RetrySlots;
  // What the request machine's effects need (request-effects.ts).
  readonly policy: Policy;
  readonly transport: Transport;
  readonly auth: AuthCoordinator | undefined;
  readonly reconcile: ReconcileHook | undefined;
  /** The app's own verdict on each attempt (classify-attempt.ts); none: failwise classifies every attempt. */
  readonly classify: ClassifyHook | undefined;
  readonly connectivity: ConnectivitySource | undefined;
  /** The request machine, prepared once for the client (prepare-request-machine.ts). */
  readonly machine: PreparedMachine<RequestMachineContext, RequestMachineInput>;
  /** What every request's machine starts with besides the request's own. */
  readonly originIds: readonly string[];
  readonly random: (() => number) | undefined;
  /**
   * Whether the machines are inspected: the Stately browser inspector's default serializer writes into an
   * object with more than 10 keys for a moment, and the policy is frozen, so an inspected request's machine
   * gets a shallow copy (same values) that the serializer may write into.
   */
  readonly inspected: boolean;
  /**
   * The machine input of the client's lean runs: one object (an empty one to begin with) that each run fills in
   * as it starts. The lean executor reads its input once, as it makes the run's context, and keeps nothing of it
   * (lean-actor.ts), so a request makes no input object only to be copied. XState keeps its input (the inspector
   * shows it): an inspected run fills in one of its own.
   */
  readonly input: RequestMachineInput;
}

/** A request in flight as the client reaches it: to pass a hint on, or to cancel it and wait for its end. */
export type InFlightRequest = Pick<RequestRun<unknown>, 'cancel' | 'connectivity' | 'done'>;

const CANCEL = { type: 'request.cancel' };
const ONLINE = { type: 'connectivity.online' };
const OFFLINE = { type: 'connectivity.offline' };

/**
 * One request in flight (or one send of an outbox entry), like TanStack Query's `Retryer`: it owns the caller's
 * signal, its machine run, the promise the caller awaits (`done`), its decision events, and it answers what its
 * machine asks for (`transport`, `chooseOrigin`, ...: the run calls these methods of its observer, and each hands
 * the request itself to the effects, request-effects.ts). It observes its run and listens to the caller's signal itself
 * (`handleEvent`), its methods on the prototype: a request in flight holds no closures of its own but its
 * promise's two resolving functions (bench/memory.ts).
 */
export class RequestRun<T = RunOutput> implements RunObserver {
  /** Every failure of its attempts, when asked for (an outbox entry keeps all of a send's, not only the last). */
  failures: Failure[] | undefined = undefined;
  /** Settles once the request ends, with what `outcome` makes of the machine's output; set by `start`. */
  done: Promise<T> | undefined = undefined;
  /** The caller's signal, once the run listens to it. */
  private signal: AbortSignal | undefined = undefined;
  private machine: MachineRun<RequestMachineContext> | undefined = undefined;
  private resolve: ((value: T) => void) | undefined = undefined;
  private reject: ((error: Error) => void) | undefined = undefined;

  constructor(
    readonly host: RequestHost,
    readonly requestId: string,
    readonly prepared: PreparedRequest,
    readonly startedAt: number,
    readonly trace: TelemetryRun | undefined,
  ) {}

  /**
   * Runs the request through its machine to its end, under `policy`; `signal` (the caller's) cancels it at once.
   * A plain promise, not an async function: a request in flight holds no suspended frame of its own.
   */
  start(policy: Policy, signal: AbortSignal | undefined): Promise<T> {
    // Aborted before it began: as fetch, nothing is sent, so no attempt is counted or announced.
    if (signal?.aborted)
      return Promise.resolve(
        this.finish({ status: 'failed', reason: 'cancelled', failure: cancelledBeforeStart(), attempts: 0 })!,
      );
    const done = (this.done = new Promise<T>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    }));
    this.begin(signal);
    const { host, prepared } = this;
    try {
      const input = host.inspected ? ({} as RequestMachineInput) : host.input;
      input.requestId = this.requestId;
      input.method = prepared.method;
      input.origins = host.originIds;
      input.write = prepared.write;
      input.hasIdempotencyKey = prepared.idempotencyKey !== undefined;
      input.policy = host.inspected ? { ...policy } : policy;
      input.budgetMs = prepared.deadlineMs ?? policy.budgetMs;
      input.startedAt = host.clock.now();
      input.canRefreshAuth = host.auth !== undefined;
      input.canReconcile = host.reconcile !== undefined;
      // Durable work is deferred by the outbox, from the send's output: the machine itself never defers here.
      input.deferrable = false;
      input.random = host.random;
      input.deviceOffline = effects.isOffline(host);
      this.machine = host.machine.start(input, this);
      // Aborted while it started: no abort event comes now.
      if (signal?.aborted) this.cancel();
      return done;
    } catch (error) {
      this.finish(undefined);
      return Promise.reject(
        error instanceof Error
          ? error
          : new MachineError(`requestMachine: ${String(error)}`, { cause: error }),
      );
    }
  }

  /**
   * The request begins: it is in flight, and `signal` (the caller's) cancels it. It listens before its run starts,
   * so that a run that ends as it starts (no usable origin) takes the listener off again as it ends (`finish`).
   */
  private begin(signal: AbortSignal | undefined): void {
    this.host.inFlight.add(this);
    if (signal === undefined) return;
    // The run listens itself (`handleEvent`): no closure per request.
    this.signal = signal;
    signal.addEventListener('abort', this, { once: true });
  }

  /** Ends the request at once as `failed` / `cancelled`; aborts what is in flight. */
  cancel(): void {
    this.machine?.send(CANCEL);
  }

  /**
   * Passes on a connectivity hint (rule 6): offline stops further attempts, online allows them; `changed` (at the
   * clock's `at`) ends a read's attempt in flight and sends it again at once, and keeps any attempt in flight
   * across it from counting against its origin (docs/connectivity.md).
   */
  connectivity(hint: 'online' | 'offline' | 'changed', at: number): void {
    this.machine?.send(
      hint === 'changed' ? { type: 'connectivity.changed', at } : hint === 'online' ? ONLINE : OFFLINE,
    );
  }

  /** The caller's signal aborted: the request ends at once, `cancelled`. */
  handleEvent(): void {
    this.cancel();
  }

  // ---- what the machine asks for: each handed to the client's effects with the request itself ----

  /** One attempt, read from the machine's context (`contextInputs`, prepare-request-machine.ts). */
  transport(context: RequestMachineContext, signal: AbortSignal): PromiseLike<AttemptOutput> {
    return effects.attempt(this, context, signal);
  }

  chooseOrigin(input: ChooseOriginInput): ChooseOriginOutput {
    return effects.chooseOrigin(this, input);
  }

  claimRetry(): ClaimRetryOutput {
    return effects.claimRetry(this);
  }

  refreshAuth(input: RefreshAuthInput): Promise<RefreshAuthOutput> {
    return effects.refreshAuth(this, input);
  }

  reconcile(input: ReconcileInput): Promise<ReconcileOutput> {
    return effects.reconcile(this, input);
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
        route: this.prepared.route,
        origin: origin?.id,
        host: origin?.host,
        attempt,
        elapsedMs: host.clock.now() - this.startedAt,
      }) as DecisionEventDraft,
    );
  }

  /**
   * Whether the run hears emitted events of `type` (`LeanObserver.hears`): an attempt's end always (the origin set's
   * health and the server holds hear it), the rest only for the app's `onEvent` or telemetry.
   */
  hears(type: string): boolean {
    return (
      this.host.wantsEvents ||
      this.trace !== undefined ||
      type === 'attempt-succeeded' ||
      type === 'attempt-failed'
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
    // Every attempt's outcome that is evidence about its origin feeds the origin set's health (attempt-evidence.ts);
    // a success is not a decision event.
    if (event.type === 'attempt-succeeded' || event.type === 'attempt-failed') {
      const evidence = attemptEvidence(event);
      if (evidence !== undefined) host.monitor.report(evidence);
      if (event.type === 'attempt-succeeded') return;
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

  /** The run ended: the request's bookkeeping and outcome (`finish`), then the promise the caller awaits settles. */
  ended(end: LeanEnd): void {
    const output = end.status === 'done' ? (end.output as RequestMachineOutput | undefined) : undefined;
    let value: T | undefined;
    try {
      value = this.finish(output);
    } catch (error) {
      // The caller's own code failed: its promise still settles.
      this.reject!(error instanceof Error ? error : new MachineError(String(error), { cause: error }));
      return;
    }
    if (output !== undefined) this.resolve!(value!);
    else if (end.status === 'error')
      this.reject!(
        end.error instanceof Error
          ? end.error
          : new MachineError(`requestMachine: ${String(end.error)}`, { cause: end.error }),
      );
    else this.reject!(new MachineError(`requestMachine ended ${end.status} without output`));
  }

  /**
   * When the machine ends: the request's bookkeeping, then what the run resolves with (`outcome`). Durable work is
   * deferred by the outbox, not by this machine (`deferrable: false`): never `deferred` here.
   */
  private finish(output: RequestMachineOutput | undefined): T | undefined {
    const { host } = this;
    if (this.signal) this.signal.removeEventListener('abort', this);
    host.inFlight.delete(this);
    // A request that began retrying holds its slot until it ends.
    host.retrySlots.release(this.requestId);
    // A send slot booked and not used goes back.
    if (host.throttles !== undefined) host.throttles.release(this.requestId);
    return output === undefined ? undefined : this.outcome(output as RunOutput);
  }

  /** What the run resolves with, from the machine's output: the output itself (an outbox entry's send). */
  protected outcome(output: RunOutput): T {
    return output as T;
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
    const { host } = this;
    const now = host.clock.now();
    if (this.trace) this.trace.end(output, now);
    // The lean executor's output is a fresh object of its own keys that nothing reads after the run's end: it
    // becomes the outcome, its time added in place. An inspected run's output is XState's snapshot's, which the
    // inspector shows as the machine's: the outcome is a copy of it.
    const outcome = (host.inspected ? { ...output } : output) as Record<string, unknown>;
    outcome.elapsedMs = now - this.startedAt;
    return outcome as unknown as Outcome;
  }
}
