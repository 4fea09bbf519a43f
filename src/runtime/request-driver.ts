import { requestEffectDefaults } from '../../machines/request/request.io.js';
import { MachineError } from '../errors/machine-error.js';
import { requestLogic } from '../../machines/request/request.logic.js';
import { requestTable } from '../../machines/request/request.table.js';
import type {
  AttemptInput,
  AttemptOutput,
  ChooseOriginInput,
  ChooseOriginOutput,
  ClaimRetryInput,
  ClaimRetryOutput,
  ReconcileInput,
  ReconcileOutput,
  RefreshAuthInput,
  RefreshAuthOutput,
  RequestMachineEmitted,
  RequestMachineInput,
  RequestMachineOutput,
} from '../../machines/request/request.types.js';
import type { Clock } from '../clock/clock.js';
import type { LeanEnd } from '../engine/lean-actor.js';
import type { MachineRun, MachineRunner, RunObserver } from '../engine/machine-runner.js';

/**
 * The effects a request needs, as plain functions: the runner turns them into the machine's actors. One that
 * answers at once (a value, not a promise) is handed back without a tick in the lean executor.
 */
export interface RequestEffects {
  transport(input: AttemptInput, signal: AbortSignal): PromiseLike<AttemptOutput>;
  chooseOrigin?: ((input: ChooseOriginInput, signal: AbortSignal) => Answer<ChooseOriginOutput>) | undefined;
  claimRetry?: ((input: ClaimRetryInput, signal: AbortSignal) => Answer<ClaimRetryOutput>) | undefined;
  refreshAuth?: ((input: RefreshAuthInput, signal: AbortSignal) => Answer<RefreshAuthOutput>) | undefined;
  reconcile?: ((input: ReconcileInput, signal: AbortSignal) => Answer<ReconcileOutput>) | undefined;
}

type Answer<T> = T | Promise<T>;

export interface RunningRequest<T = RequestMachineOutput> {
  /** Settles once, with the machine's output (or what `onEnded` made of it), when the request reaches a final state. */
  readonly done: Promise<T>;
  /** Ends the request at once as `failed` / `cancelled`; aborts what is in flight. */
  cancel(): void;
  /**
   * Passes on a connectivity hint (rule 6): offline stops further attempts, online allows them;
   * `changed` (at the clock's `at`) ends a read's attempt in flight and sends it again at once, and keeps any
   * attempt in flight across it from counting against its origin (docs/connectivity.md).
   */
  connectivity(hint: 'online' | 'offline' | 'changed', at: number): void;
}

/** Who hears one request's run: what its machine emits, and its end. */
export interface RequestObserver<T> {
  emitted(event: RequestMachineEmitted): void;
  /**
   * Called when the request ends, right before `done` settles, with the machine's output (none when it was stopped
   * or failed); `done` resolves with what it returns. The caller's bookkeeping and its outcome need no promise
   * reaction of their own.
   */
  ended(output: RequestMachineOutput | undefined): T;
}

export interface RequestDriver {
  /** Starts one request machine; `observer` (one object per request: no closures) hears it. */
  run<T = RequestMachineOutput>(input: RequestMachineInput, observer: RequestObserver<T>): RunningRequest<T>;
}

const requestDefinition = { table: requestTable, logic: requestLogic };
/** The client's origin choice and retry-budget claim answer at once (RequestEffects says they may). */
const ANSWER_AT_ONCE: ReadonlySet<string> = new Set(['chooseOrigin', 'claimRetry']);

/**
 * Runs request machines through the client's runner (the lean executor, or XState when inspected): the one
 * place that starts a request machine.
 */
export function createRequestDriver(
  effects: RequestEffects,
  options: { clock: Clock; runner: MachineRunner },
): RequestDriver {
  // An effect left out keeps the machine's default.
  const actors: Record<string, (input: never, signal: AbortSignal) => unknown> = { ...requestEffectDefaults };
  for (const [name, effect] of Object.entries(effects)) if (effect) actors[name] = effect as never;

  const machine = options.runner.prepare(requestDefinition, {
    clock: options.clock,
    actors,
    ignoresSignal: ANSWER_AT_ONCE,
  });
  return {
    run<T>(input: RequestMachineInput, observer: RequestObserver<T>) {
      const running = new Running<T>(observer);
      running.machine = machine.start(input, running);
      return running;
    },
  };
}

const CANCEL = { type: 'request.cancel' };
const ONLINE = { type: 'connectivity.online' };
const OFFLINE = { type: 'connectivity.offline' };

/**
 * One request in flight, and the observer of its run: its methods live on the prototype, so a request holds no
 * closures of its own.
 */
class Running<T> implements RunningRequest<T>, RunObserver {
  readonly done: Promise<T>;
  machine!: MachineRun<unknown>;
  private resolve!: (value: T) => void;
  private reject!: (error: Error) => void;

  constructor(private readonly observer: RequestObserver<T>) {
    this.done = new Promise<T>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  cancel(): void {
    this.machine.send(CANCEL);
  }

  connectivity(hint: 'online' | 'offline' | 'changed', at: number): void {
    this.machine.send(
      hint === 'changed' ? { type: 'connectivity.changed', at } : hint === 'online' ? ONLINE : OFFLINE,
    );
  }

  emitted(event: { type: string }): void {
    this.observer.emitted(event as RequestMachineEmitted);
  }

  ended(end: LeanEnd): void {
    const output = end.status === 'done' ? (end.output as RequestMachineOutput | undefined) : undefined;
    let value: T;
    try {
      value = this.observer.ended(output);
    } catch (error) {
      // The caller's own code failed: its promise still settles.
      this.reject(error instanceof Error ? error : new MachineError(String(error), { cause: error }));
      return;
    }
    if (output !== undefined) this.resolve(value);
    else if (end.status === 'error')
      this.reject(
        end.error instanceof Error
          ? end.error
          : new MachineError(`requestMachine: ${String(end.error)}`, { cause: end.error }),
      );
    else this.reject(new MachineError(`requestMachine ended ${end.status} without output`));
  }
}
