import type { MachineLogic } from '../../src/engine/machine-logic.js';
import { requestGuards, requestLogic } from '../../machines/request/request.logic.js';
import { requestTable } from '../../machines/request/request.table.js';
import type {
  ChooseOriginInput,
  RequestMachineContext,
  RequestMachineInput,
} from '../../machines/request/request.types.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { isWrite } from '../../src/policy/methods.js';
import type { Failure } from '../../src/policy/failure.js';
import type { Call, Outcome } from './driven-run.js';
import type { MachineModel, StepInfo } from './machine-model.js';

/**
 * The request machine under every input the bounds allow (attempts.max, method, key, auth, reconcile, durable,
 * offline at start; two origins) and every answer of every actor: each transport outcome class, chooseOrigin
 * naming either origin or none (or the primary under a server hold, or throttled past the budget), claimRetry granted or refused, refreshAuth and reconcile's answers, rejections.
 * Actors answer at once (no `at`): the machine's time moves only by its own timers.
 */
export interface RequestBounds {
  maxAttempts: readonly number[];
  methods: readonly ('GET' | 'POST' | 'PUT')[];
}

export const ORIGINS = ['primary', 'backup'] as const;

const ok = (value: unknown): Outcome => ({ ok: true, value });
const rejected = (src: string): Outcome => ({ ok: false, error: new Error(`${src} failed`) });
const response =
  (status: number, headers: Record<string, string> = {}, attempts?: number) =>
  () =>
    ok({
      kind: 'response',
      response: new Response(null, { status, headers }),
      ...(attempts ? { attempts } : {}),
    });
const error = (phase: string, requestSent?: 'no' | 'yes' | 'unknown') => () =>
  ok({ kind: 'error', phase, message: phase, ...(requestSent ? { requestSent } : {}) });

/** Every class of transport outcome (docs/failure-classes.md), and a transport that throws instead of answering. */
const TRANSPORT: readonly { label: string; sent: 'no' | 'yes' | 'unknown'; outcome: () => Outcome }[] = [
  { label: '200', sent: 'yes', outcome: response(200) },
  // The server refused the request before acting on it: rule 3's one more attempt is not a replay.
  { label: '401', sent: 'no', outcome: response(401) },
  { label: '404', sent: 'yes', outcome: response(404) },
  { label: '429 Retry-After 0', sent: 'yes', outcome: response(429, { 'retry-after': '0' }) },
  { label: '429 Retry-After 3600', sent: 'yes', outcome: response(429, { 'retry-after': '3600' }) },
  { label: '500', sent: 'yes', outcome: response(500) },
  { label: '503', sent: 'yes', outcome: response(503) },
  { label: '503 after 2 attempts', sent: 'yes', outcome: response(503, {}, 2) },
  { label: 'offline', sent: 'no', outcome: error('offline', 'no') },
  { label: 'dns', sent: 'no', outcome: error('dns', 'no') },
  { label: 'connect', sent: 'no', outcome: error('connect', 'no') },
  { label: 'connect-timeout', sent: 'no', outcome: error('connect-timeout', 'no') },
  { label: 'tls', sent: 'no', outcome: error('tls', 'no') },
  { label: 'response-timeout', sent: 'unknown', outcome: error('response-timeout', 'unknown') },
  { label: 'connection-lost', sent: 'unknown', outcome: error('connection-lost', 'unknown') },
  { label: 'unexpected', sent: 'unknown', outcome: error('unknown') },
  { label: 'unexpected, not sent', sent: 'no', outcome: error('unknown', 'no') },
  { label: 'throws', sent: 'unknown', outcome: () => rejected('transport') },
];

/** What the transport answer of a call said about whether the request went out. */
const sentBy = new WeakMap<object, 'no' | 'yes' | 'unknown'>();

function answers(call: Call): readonly { label: string; outcome: () => Outcome }[] {
  const of = (label: string, outcome: () => Outcome) => ({ label: `${call.src}: ${label}`, outcome });
  switch (call.src) {
    case 'transport':
      return TRANSPORT.map((t) =>
        of(t.label, () => {
          const outcome = t.outcome();
          sentBy.set(outcome, t.sent);
          return outcome;
        }),
      );
    case 'chooseOrigin':
      return [
        ...ORIGINS.map((origin) => of(origin, () => ok({ origin }))),
        of('none', () => ok({ origin: undefined })),
        // A server hold on the primary that ends 1 ms before the budget, the backup free of holds,
        // offered to the first choice of origin only: a hold that leaves more time repeats the whole tree after
        // it at a later time and doubles the states. (A hold past the budget, which takes the backup, is left to
        // the differential and unit tests.)
        ...((call.input as ChooseOriginInput).attempt === 1
          ? [
              of('primary held until 999 ms', () =>
                ok({ origin: 'primary', holdUntil: 999, alternative: 'backup' }),
              ),
              // A send slot past the budget: the request ends `throttled`, nothing sent.
              of('primary throttled past the budget', () =>
                ok({ origin: 'primary', holdUntil: 1_000_000, holdBy: 'rate' }),
              ),
            ]
          : []),
        of('throws', () => rejected('chooseOrigin')),
      ];
    case 'claimRetry':
      return [
        of('granted', () => ok({ granted: true })),
        of('refused', () => ok({ granted: false })),
        of('throws', () => rejected('claimRetry')),
      ];
    case 'refreshAuth':
      return [of('refreshed', () => ok({})), of('throws', () => rejected('refreshAuth'))];
    case 'reconcile':
      return [
        ...(['applied', 'not-applied', 'unknown'] as const).map((status) => of(status, () => ok({ status }))),
        of('throws', () => rejected('reconcile')),
      ];
    default:
      return [];
  }
}

/** Check (d)'s state along a path: whether a keyless write's attempt may have reached an origin, and which. */
export interface WriteMonitor {
  /** An attempt may have reached the server and reconcile has not said it was not applied. */
  exposed: boolean;
  /** The origin a write that may have reached one is pinned to. */
  pinnedTo?: string | undefined;
}

/**
 * Check (d): no attempt of a keyless write starts after one that may have reached the server (answered with
 * `requestSent` yes or unknown, cut by a timer, or thrown) unless reconcile then said `not-applied`; and a
 * write that may have reached an origin is never sent to another (rules 2 and 7).
 */
export const writeMonitor = {
  check: 'd' as const,
  initial: (): WriteMonitor => ({ exposed: false }),
  step(state: WriteMonitor, step: StepInfo): { next: WriteMonitor; violation?: string } {
    const input = step.input as RequestMachineInput;
    if (!input.write) return { next: state };
    const keyless = !input.hasIdempotencyKey;
    let violation: string | undefined;
    let { exposed, pinnedTo } = state;
    for (const call of step.started) {
      if (call.src !== 'transport') continue;
      const origin = (call.input as { origin: string }).origin;
      if (keyless && exposed)
        violation = '(d) a keyless write was sent again after it may have reached the server';
      else if (pinnedTo !== undefined && origin !== pinnedTo)
        violation = `(d) a write that may have reached ${pinnedTo} was sent to ${origin}`;
    }
    for (const call of step.ended) {
      if (call.src === 'transport') {
        const sent = call.answered && call.outcome ? (sentBy.get(call.outcome) ?? 'unknown') : 'unknown';
        if (sent !== 'no') {
          exposed = true;
          pinnedTo = (call.input as { origin: string }).origin;
        }
      }
      if (call.src === 'reconcile' && call.outcome?.ok) {
        const { status } = call.outcome.value as { status: string };
        if (status === 'not-applied') exposed = false;
      }
    }
    return { next: { exposed, pinnedTo }, ...(violation ? { violation } : {}) };
  },
};

/**
 * The context fields that decide the future. Left out: what is fixed by the input (the root is in the key),
 * `random`, and what only messages, events and outputs read: the failure history before the last failure,
 * `changedInFlight`, `lastResponse`, and `attemptStartedAt` (equal to `now` throughout an attempt, since answers carry no
 * time). The last failure is kept as what the guards and the next plan read of it.
 */
function abstractContext(context: Record<string, unknown>): unknown {
  const {
    random: _random,
    policy: _policy,
    requestId: _requestId,
    changedInFlight: _changedInFlight,
    attemptStartedAt: _attemptStartedAt,
    failures,
    response,
    lastResponse: _lastResponse,
    ...rest
  } = context;
  const list = failures as Failure[];
  const last = list.at(-1);
  const guardsOnLast = (name: 'isUnauthorized' | 'isOffline' | 'isRetryableFailure') =>
    requestGuards[name]({ context: context as unknown as RequestMachineContext });
  return {
    ...rest,
    failures: list.length,
    lastFailure: last && [
      guardsOnLast('isUnauthorized'),
      guardsOnLast('isOffline'),
      guardsOnLast('isRetryableFailure'),
      last.requestSent === 'no',
      last.retryAfterMs,
    ],
    response: response !== undefined,
  };
}

export function requestModel(bounds: RequestBounds): MachineModel<WriteMonitor> {
  const inputs: MachineModel['inputs'][number][] = [];
  for (const max of bounds.maxAttempts) {
    // Short waits against a short budget, so that paths run out of budget as well as of attempts.
    const policy = definePolicy({
      attempts: { max },
      budgetMs: 1_000,
      timeouts: { attemptMs: 300, connectMs: 300 },
      backoff: { initialMs: 100, maxMs: 100, jitter: 'none' },
    });
    for (const method of bounds.methods)
      for (const key of isWrite(method) ? [false, true] : [false])
        for (const canRefreshAuth of [false, true])
          for (const canReconcile of isWrite(method) && !key ? [false, true] : [false])
            for (const deferrable of [false, true])
              for (const deviceOffline of [false, true]) {
                const input: RequestMachineInput = {
                  requestId: 'r',
                  method,
                  origins: ORIGINS,
                  write: isWrite(method),
                  hasIdempotencyKey: key,
                  policy,
                  budgetMs: policy.budgetMs,
                  startedAt: 0,
                  canRefreshAuth,
                  canReconcile,
                  deferrable,
                  random: () => 0.5,
                  deviceOffline,
                };
                const flags = [
                  key && 'key',
                  canRefreshAuth && 'auth',
                  canReconcile && 'reconcile',
                  deferrable && 'durable',
                  deviceOffline && 'offline',
                ];
                inputs.push({
                  label: `${method} max ${max}${flags
                    .filter(Boolean)
                    .map((f) => ` ${f}`)
                    .join('')}`,
                  input: () => input,
                });
              }
  }
  return {
    name: 'request',
    run: {
      table: requestTable,
      logic: requestLogic as unknown as MachineLogic<unknown, unknown>,
      invoked: ['chooseOrigin', 'transport', 'claimRetry', 'refreshAuth', 'reconcile'],
    },
    inputs,
    events: (type, run) =>
      type === 'connectivity.changed' ? [{ type, at: run.actor.context.now }] : [{ type }],
    answers,
    abstractContext,
    abstractCall: (call) => [call.src],
    // On its own: by its timers and its actors' answers, with no event from the caller (a cancel ends anything).
    goal: {
      name: 'a final state on its own',
      holds: (run) => run.actor.status === 'done',
      via: (stimulus) => stimulus.kind !== 'event',
    },
    monitor: writeMonitor,
  };
}
