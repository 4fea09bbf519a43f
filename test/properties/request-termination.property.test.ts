// What this proves: for ANY valid policy (with a small health policy, so that a second origin takes over), one
// or two origins, ANY sequence of transport outcomes (every failure class, random statuses, random Retry-After
// values, transport-reported attempt counts, hangs and crashes), any method with or without a key (given or
// 'auto'), with or without `idempotent` and `deadlineMs`, with or without auth, with or without a `reconcile`
// hook (applied, not applied, unknown, throwing or hanging, after any latency), cancellation, connectivity
// hints at any moment, any clock advances and a fresh random number for each draw, a request made through the
// public client:
//   - ends, within attempts.max attempts counted across layers (the transport's own attempts included) and
//     within its time budget (`deadlineMs`, else policy.budgetMs), and says why it failed (rule 1);
//   - never re-sends a write that may have reached the server without a key, unless reconcile said it was not
//     applied; a retried write keeps its key and, once it may have reached an origin, that origin (rules 2, 7);
//   - refreshes auth at most once, and re-sends after a 401 only after that refresh (rule 3);
//   - sends nothing while the device reports offline (rule 6), and leaves no timer behind.
// Every expected value is written out here from the rules (docs/rules.md, docs/failure-classes.md: which
// replies may have reached the server, which methods are writes), never taken from the library's classifier. The last test asserts that the generated
// runs reach each widened path (reconciling, both origins, deadlineMs and idempotent deciding, varied random
// draws); seeds are fixed (test/setup/fixed-seed.ts), so the counts are the same on every run.
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { manualConnectivity } from '../../src/connectivity/manual-connectivity.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import type { ReconcileResult } from '../../src/runtime/client-options.js';
import type { FailoverRequest } from '../../src/runtime/prepare-request.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import type { Outcome } from '../../src/policy/outcome.js';
import type { PolicyInput } from '../../src/policy/policy.js';
import type { TransportResult } from '../../src/transports/transport.js';
import { policyArb, replyArb } from '../helpers/arbitraries.js';
import { scriptedTransport, type ScriptedReply } from '../helpers/scripted-transport.js';
import { propertyRuns } from '../setup/property-runs.js';

const RUNS = 600;
const runs = propertyRuns(RUNS);

const REASONS = [
  'not-retryable',
  'attempts-exhausted',
  'budget-exhausted',
  'unsafe-to-replay',
  'retry-after-exceeds-budget',
  'retry-budget-exhausted',
  'unauthorized',
  'offline',
  'no-healthy-origin',
  'cancelled',
];

const ORIGINS = {
  primary: 'https://api.example.test',
  backup: 'https://backup.example.test',
} as const;

// ---------------------------------------------------------------------------------------------------------
// The oracle: the rules' words, written out.

/** rule 2: a write is any method but GET, HEAD, OPTIONS, PUT, DELETE, unless the request says otherwise. */
const REPEATABLE_METHODS = ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'];
const isWriteByContract = (method: string, idempotent: boolean | undefined) =>
  idempotent === undefined ? !REPEATABLE_METHODS.includes(method) : !idempotent;

/** The failure-class table (docs/transports.md): the phases in which nothing was sent (requestSent `no`). */
const NOTHING_SENT_PHASES = ['offline', 'dns', 'connect', 'connect-timeout', 'tls'];

/** What the engine got from one attempt: the scripted reply, or `aborted` when it ended the attempt first. */
type Got = ScriptedReply['reply'] | 'aborted';

/**
 * Whether an attempt may have reached the server, from what the engine got: any response did (the server
 * answered); a transport error did unless the transport says `no`, or says nothing in a phase the
 * failure-class table marks `no`; an attempt the engine ended (a timeout, a cancel, going offline) or a crash may have.
 */
function mayHaveReachedServer(got: Got): boolean {
  if (got === 'aborted' || got === 'hang' || got === 'throw' || got.kind === 'response') return true;
  const sent = got.requestSent ?? (NOTHING_SENT_PHASES.includes(got.phase) ? 'no' : 'unknown');
  return sent !== 'no';
}

const is401 = (got: Got) => typeof got === 'object' && got.kind === 'response' && got.response.status === 401;

// ---------------------------------------------------------------------------------------------------------
// The generators.

type KeyChoice = 'none' | 'given' | 'auto';
/** The request's key field for a choice (the one place to edit if the key's form changes). */
const keyField = (choice: KeyChoice): Pick<FailoverRequest, 'idempotencyKey'> =>
  choice === 'none' ? {} : { idempotencyKey: choice === 'given' ? 'k' : 'auto' };

type ReconcileAnswer = ReconcileResult['status'] | 'throws' | 'hangs';

/** A small health policy, so that a request's own failures can fail the primary over within its attempts. */
const healthArb = fc
  .record({ suspectAfter: fc.integer({ min: 1, max: 2 }), failoverExtra: fc.integer({ min: 0, max: 2 }) })
  .map(({ suspectAfter, failoverExtra }) => ({ suspectAfter, failoverAfter: suspectAfter + failoverExtra }));

const argsArb = fc.record({
  policyInput: policyArb,
  health: healthArb,
  backup: fc.option(fc.constantFrom<'all' | 'reads'>('all', 'reads'), { nil: undefined }),
  replies: fc.array(replyArb, { minLength: 1, maxLength: 8 }),
  method: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'),
  key: fc.constantFrom<KeyChoice>('none', 'given', 'auto'),
  idempotent: fc.option(fc.boolean(), { nil: undefined }),
  deadlineMs: fc.option(fc.integer({ min: 1, max: 20_000 }), { nil: undefined }),
  auth: fc.constantFrom('none', 'refreshes', 'refresh-fails'),
  reconcile: fc.option(
    fc.record({
      /** Its answers in turn, the last one repeated. */
      answers: fc.array(
        fc.constantFrom<ReconcileAnswer>('applied', 'not-applied', 'unknown', 'throws', 'hangs'),
        {
          minLength: 1,
          maxLength: 4,
        },
      ),
      latencyMs: fc.integer({ min: 0, max: 2_000 }),
    }),
    { nil: undefined },
  ),
  steps: fc.array(fc.integer({ min: 1, max: 3_000 }), { minLength: 1, maxLength: 10 }),
  cancelAfterStep: fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }),
  /** The random numbers the client draws, in turn and cyclically. */
  randoms: fc.array(fc.double({ min: 0, max: 0.999_999, noNaN: true }), { minLength: 1, maxLength: 6 }),
  /** A hint (or none) before each clock step. */
  hints: fc.array(fc.option(fc.constantFrom('online', 'offline', 'changed'), { nil: undefined }), {
    maxLength: 12,
  }),
});
type Args = typeof argsArb extends fc.Arbitrary<infer T> ? T : never;

// ---------------------------------------------------------------------------------------------------------
// The harness.

/** Runs (across the property's runs) that reached each widened path; asserted by the last test. */
const reached = {
  runs: 0,
  reconciling: 0,
  /** Reconcile said `not-applied` and the write was sent again. */
  reconciledThenResent: 0,
  bothOrigins: 0,
  /** A deadlineMs shorter than policy.budgetMs ended the request on time. */
  deadlineBound: 0,
  /** `idempotent: true` let a keyless POST/PATCH be sent again after it may have reached the server. */
  idempotentTrueResent: 0,
  /** `idempotent: false` kept a keyless GET/HEAD/PUT/DELETE from being sent again: reconcile or unsafe-to-replay. */
  idempotentFalseHeld: 0,
  /** The client drew two different random numbers. */
  variedRandoms: 0,
};

interface Call {
  /** The scripted reply, or `aborted` once the engine ended the attempt before it (the scripted transport
   * then resolves with its `aborted` error: a timeout that falls due with the reply wins, as its timer came first). */
  got: Got;
  origin: string;
  key: string | undefined;
  /** Refreshes started before this call was sent. */
  refreshesBefore: number;
  /** Reconcile answers `not-applied` given before this call was sent. */
  notAppliedBefore: number;
  /** What the transport resolved with (undefined: it crashed, or has not answered). */
  result?: TransportResult;
}

async function runOnce(args: Args): Promise<void> {
  const policyInput: PolicyInput = { ...args.policyInput, health: args.health };
  const policy = definePolicy(policyInput);
  const clock = simulatedClock({ startAt: 1_000_000 });
  const transport = scriptedTransport(clock, args.replies);
  const connectivity = manualConnectivity('online');
  const write = isWriteByContract(args.method, args.idempotent);
  const budgetMs = args.deadlineMs ?? policy.budgetMs;

  let refreshes = 0;
  const reconcileCalls: { afterCalls: number; answer: ReconcileAnswer }[] = [];
  const notApplied = () => reconcileCalls.filter((call) => call.answer === 'not-applied').length;
  const calls: Call[] = [];
  const sentWhileOffline: number[] = [];
  const send = transport.send.bind(transport);
  transport.send = (request) => {
    if (connectivity.current() === 'offline') sentWhileOffline.push(calls.length + 1);
    const call: Call = {
      got: args.replies[Math.min(calls.length, args.replies.length - 1)]!.reply,
      origin: request.url.startsWith(ORIGINS.backup) ? 'backup' : 'primary',
      key: request.headers['idempotency-key'],
      refreshesBefore: refreshes,
      notAppliedBefore: notApplied(),
    };
    calls.push(call);
    const sending = send(request);
    void sending.then(
      (result) => {
        call.result = result;
        if (result.kind === 'error' && result.message === 'aborted') call.got = 'aborted';
      },
      () => {},
    );
    return sending;
  };
  const drawn: number[] = [];
  const script = args.reconcile;
  /** The reconcile hook's own answer timers: the hook gets no signal, so one may outlive the request. */
  const reconcileTimers = new Set<unknown>();
  // Rule 6: no attempt starts (is counted) while offline, sent or not.
  const startedWhileOffline: number[] = [];
  const client = createFailoverClient({
    connectivity,
    onEvent: (event) => {
      if (event.type === 'attempt-started' && connectivity.current() === 'offline')
        startedWhileOffline.push(event.attempt);
    },
    origins: [
      { id: 'primary', url: ORIGINS.primary },
      ...(args.backup === undefined ? [] : [{ id: 'backup', url: ORIGINS.backup, accepts: args.backup }]),
    ],
    policy,
    clock,
    transport,
    random: () => {
      const value = args.randoms[drawn.length % args.randoms.length]!;
      drawn.push(value);
      return value;
    },
    ...(args.auth === 'none'
      ? {}
      : {
          auth: {
            headers: () => ({ authorization: 'Bearer t' }),
            refresh: () => {
              refreshes += 1;
              return args.auth === 'refreshes' ? Promise.resolve() : Promise.reject(new Error('no'));
            },
          },
        }),
    ...(script === undefined
      ? {}
      : {
          reconcile: () => {
            const answer = script.answers[Math.min(reconcileCalls.length, script.answers.length - 1)]!;
            reconcileCalls.push({ afterCalls: calls.length, answer });
            return new Promise<ReconcileResult>((resolve, reject) => {
              if (answer === 'hangs') return;
              const timer = clock.setTimeout(() => {
                reconcileTimers.delete(timer);
                if (answer === 'throws') reject(new Error('reconcile endpoint down'));
                else resolve({ status: answer });
              }, script.latencyMs);
              reconcileTimers.add(timer);
            });
          },
        }),
  });
  const controller = new AbortController();
  let outcome: Outcome | undefined;
  let endedAt = 0;
  const started = clock.now();
  void client
    .request({
      method: args.method,
      path: '/p',
      signal: controller.signal,
      ...keyField(args.key),
      ...(args.idempotent === undefined ? {} : { idempotent: args.idempotent }),
      ...(args.deadlineMs === undefined ? {} : { deadlineMs: args.deadlineMs }),
    })
    .then((o) => {
      outcome = o;
      endedAt = clock.now();
    });

  for (let i = 0; outcome === undefined; i++) {
    if (i === args.cancelAfterStep) controller.abort();
    const hint = args.hints[i];
    if (hint !== undefined) connectivity.set(hint);
    await clock.increment(args.steps[i % args.steps.length]!);
    expect(i).toBeLessThan(10_000); // harness guard: the loop itself must end
  }
  await client.close();

  // Rule 1: it ends, within the attempts (the transport's own ones counted) and within its budget.
  if (outcome.status === 'deferred') throw new Error('an interactive request was deferred');
  expect(['succeeded', 'failed']).toContain(outcome.status);
  const attemptsAcrossLayers = calls.reduce((sum, call) => sum + (call.result?.attempts ?? 1), 0);
  expect(attemptsAcrossLayers).toBeLessThanOrEqual(policy.attempts.max);
  expect(outcome.attempts).toBeLessThanOrEqual(policy.attempts.max);
  // One more only for a last attempt that started and sent nothing: the device went offline, or the caller
  // cancelled, before it could.
  expect(outcome.attempts - attemptsAcrossLayers).toBeGreaterThanOrEqual(0);
  if (outcome.attempts > attemptsAcrossLayers) {
    expect(outcome.attempts).toBe(attemptsAcrossLayers + 1);
    expect(outcome.status === 'failed' && ['offline', 'cancelled'].includes(outcome.reason)).toBe(true);
  }
  expect(endedAt - started).toBeLessThanOrEqual(budgetMs);
  expect(outcome.elapsedMs).toBe(endedAt - started);
  if (outcome.status === 'failed') expect(REASONS).toContain(outcome.reason);
  expect(clock.pending() - reconcileTimers.size).toBe(0); // the client's own timers: none left
  // Rule 6.
  expect(sentWhileOffline).toEqual([]);
  expect(startedWhileOffline).toEqual([]);

  // Rule 3: one refresh at most, and a 401 is followed by another send only after it (and only once).
  expect(refreshes).toBeLessThanOrEqual(1);
  const resentAfter401 = calls.filter((_call, i) => i > 0 && is401(calls[i - 1]!.got));
  expect(resentAfter401.length).toBeLessThanOrEqual(1);
  for (const call of resentAfter401) expect(call.refreshesBefore).toBe(1);

  // Rule 2: after an attempt whose write may have reached the server, no further send without a key, unless
  // reconcile said (since) that it was not applied, or the server refused it with a 401 (rule 3).
  if (write && args.key === 'none') {
    for (let i = 1; i < calls.length; i++) {
      const before = calls[i - 1]!;
      if (!mayHaveReachedServer(before.got) || is401(before.got)) continue;
      expect(calls[i]!.notAppliedBefore, `write re-sent after call ${i} without a key`).toBeGreaterThan(
        before.notAppliedBefore,
      );
    }
  }
  // Reconcile is asked only about a keyless write, after an attempt that may have reached the server.
  for (const { afterCalls } of reconcileCalls) {
    expect(write && args.key === 'none').toBe(true);
    expect(mayHaveReachedServer(calls[afterCalls - 1]!.got)).toBe(true);
  }
  // A retried request keeps its key; a write stays on an origin it may have reached (rules 2 and 7).
  if (args.key !== 'none') {
    for (const call of calls) expect(call.key).toBe(calls[0]!.key);
    if (args.key === 'given') expect(calls[0]?.key ?? 'k').toBe('k');
  }
  if (write) {
    for (let i = 1; i < calls.length; i++)
      if (mayHaveReachedServer(calls[i - 1]!.got)) expect(calls[i]!.origin).toBe(calls[i - 1]!.origin);
  }

  // What the run reached.
  reached.runs += 1;
  if (reconcileCalls.length > 0) reached.reconciling += 1;
  if (reconcileCalls.some(({ afterCalls, answer }) => answer === 'not-applied' && calls.length > afterCalls))
    reached.reconciledThenResent += 1;
  if (new Set(calls.map((call) => call.origin)).size === 2) reached.bothOrigins += 1;
  if (
    args.deadlineMs !== undefined &&
    args.deadlineMs < policy.budgetMs &&
    outcome.status === 'failed' &&
    outcome.reason === 'budget-exhausted'
  )
    reached.deadlineBound += 1;
  const resentAfterMaybeReached = calls.some((_call, i) => i > 0 && mayHaveReachedServer(calls[i - 1]!.got));
  if (args.idempotent === true && !REPEATABLE_METHODS.includes(args.method) && args.key === 'none')
    if (resentAfterMaybeReached) reached.idempotentTrueResent += 1;
  if (args.idempotent === false && REPEATABLE_METHODS.includes(args.method) && args.key === 'none')
    if (reconcileCalls.length > 0 || (outcome.status === 'failed' && outcome.reason === 'unsafe-to-replay'))
      reached.idempotentFalseHeld += 1;
  if (new Set(drawn).size > 1) reached.variedRandoms += 1;
}

test.prop({ args: argsArb }, { numRuns: runs })(
  'every request ends within its attempts and budget, never replays an unsafe write, and says why',
  async ({ args }) => {
    await runOnce(args);
  },
  60_000,
);

// Tests in a file run in order: this reads what the property reached. Run alone (`-t`), it generates the same
// runs itself (same fixed seed, same count).
test('the generated runs reach reconciling, both origins, deadlineMs, idempotent and varied random draws', async () => {
  if (reached.runs === 0) await fc.assert(fc.asyncProperty(argsArb, runOnce), { numRuns: runs });
  expect(reached.runs).toBe(runs);
  for (const [path, runs] of Object.entries(reached)) expect(runs, path).toBeGreaterThan(0);
}, 60_000);
