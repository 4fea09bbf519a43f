import type { PolicyInput } from '../../../src/policy/policy.js';
import { answer, drop, hang, type World, type WorldOptions } from './world.js';

/**
 * The model-based scenarios: each is a path of the exhaustive exploration (scripts/verify/explore.ts, printed
 * by `npm run verify -- --paths`) told to the real client in the world's terms: an answer of the transport
 * becomes what a loopback origin does with the request (a status, a Retry-After, a dropped connection, a
 * request held unanswered), a timer firing becomes the simulated clock moving to it, an event becomes the
 * caller's or the connectivity source's act, and an answer of the store or of the app's hooks becomes what
 * the real memory store, `auth` or `reconcile` does. Each names the transitions it was written to take (those
 * it is the first scenario to take).
 */
export interface Scenario {
  name: string;
  /** The transitions of the tables this scenario is written to take (`<state> <event> #<n>`). */
  takes: readonly string[];
  options?: WorldOptions;
  run(world: World): Promise<void>;
}

/** Short, exact waits: every timer of these scenarios is a whole number of milliseconds apart. */
const quick: PolicyInput = {
  attempts: { max: 3 },
  budgetMs: 10_000,
  timeouts: { attemptMs: 1_000, connectMs: 1_000 },
  backoff: { initialMs: 100, maxMs: 100, jitter: 'none' },
};
const policy = (changes: PolicyInput = {}): PolicyInput => ({ ...quick, ...changes });

/** A promise the scenario settles when it chooses: a hook that answers late. */
function later<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function expectThat(condition: boolean, what: string): void {
  if (!condition) throw new Error(`scenario: expected ${what}`);
}

const read = { method: 'GET', path: '/items' } as const;
const keylessWrite = { method: 'POST', path: '/orders', body: '{}' } as const;
const keyedWrite = { method: 'POST', path: '/orders', body: '{}', idempotencyKey: 'k-1' } as const;
/**
 * An idempotent write: its retries go where the health machine names, so they may meet the primary again (a
 * read's retry passes over the origins that failed it while another may take it).
 */
const put = { method: 'PUT', path: '/items', body: '{}' } as const;

export const requestScenarios: Scenario[] = [
  {
    name: 'a read succeeds on the primary',
    takes: [
      'originHealth.onPrimary.healthy attempt.succeeded #0',
      'request.active.choosingOrigin xstate.done.actor.chooseOrigin #2',
      'request.active.attempting xstate.done.actor.transport #0',
      'request.active.evaluating always #0',
      'outbox outbox.close #0',
      'outbox.loading xstate.done.actor.loadEntries #0',
    ],
    options: { policy: policy() },
    async run(w) {
      const outcome = await w.run(read);
      expectThat(outcome.status === 'succeeded', 'succeeded');
    },
  },
  {
    name: 'a read retried after a 503, after its backoff, on the backup, claiming no retry slot',
    takes: [
      'originHealth.onPrimary.healthy attempt.failed #2',
      'request.active.evaluating always #11',
      'request.active.planningRetry always #0',
      'request.active.backingOff xstate.after.backoffDelay.request.active.backingOff #0',
      'request.active.checkingRetrySlot always #1',
    ],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(answer(503));
      const outcome = await w.run(read);
      expectThat(
        outcome.status === 'succeeded' && outcome.attempts === 2 && outcome.origin === 'backup',
        'succeeded at the 2nd attempt, on the backup',
      );
    },
  },
  {
    name: 'a PUT retried after a 503 claims a retry slot first, and goes back to the primary',
    takes: [
      'request.active.planningRetry always #1',
      'request.active.claimingRetry xstate.done.actor.claimRetry #0',
    ],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(answer(503));
      const outcome = await w.run(put);
      expectThat(
        outcome.status === 'succeeded' && outcome.attempts === 2 && outcome.origin === 'primary',
        'succeeded at the 2nd attempt, on the primary',
      );
    },
  },
  {
    name: 'a read that both origins failed goes back to the primary with a retry slot',
    takes: [
      'request.active.checkingRetrySlot always #0',
      'request.active.claimingRetrySlot xstate.done.actor.claimRetry #0',
    ],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(answer(503));
      w.backup.next(answer(503));
      const outcome = await w.run(read);
      expectThat(
        outcome.status === 'succeeded' &&
          outcome.attempts === 3 &&
          outcome.origin === 'primary' &&
          w.backup.received === 1,
        'succeeded at the 3rd attempt, on the primary',
      );
    },
  },
  {
    name: 'a read that both origins failed, refused a retry slot to go back to one',
    takes: ['request.active.claimingRetrySlot xstate.done.actor.claimRetry #1'],
    options: { policy: policy({ retryBudget: { percent: 0, minConcurrency: 0 } }) },
    async run(w) {
      w.primary.next(answer(503));
      w.backup.next(answer(503));
      const outcome = await w.run(read);
      expectThat(
        outcome.status === 'failed' && outcome.reason === 'retry-budget-exhausted' && outcome.attempts === 2,
        'retry-budget-exhausted after 2 attempts, one on each origin',
      );
    },
  },
  {
    name: 'a keyed write whose connection dropped is sent again to the same origin',
    takes: ['request.active.choosingOrigin xstate.done.actor.chooseOrigin #1'],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(drop);
      const outcome = await w.run(keyedWrite);
      expectThat(outcome.status === 'succeeded' && outcome.origin === 'primary', 'succeeded on the primary');
    },
  },
  {
    name: 'a 401 with auth: refreshed, sent once more',
    takes: [
      'request.active.evaluating always #1',
      'request.active.refreshingAuth xstate.done.actor.refreshAuth #0',
    ],
    options: {
      policy: policy(),
      auth: { headers: () => ({ authorization: 'Bearer t' }), refresh: async () => {} },
    },
    async run(w) {
      w.primary.next(answer(401));
      const outcome = await w.run(read);
      expectThat(outcome.status === 'succeeded', 'succeeded after the refresh');
    },
  },
  {
    name: 'a 401 whose auth.refresh() rejects',
    takes: [
      'request.active.givingUp always #1',
      'request.active.refreshingAuth xstate.error.actor.refreshAuth #0',
    ],
    options: {
      policy: policy(),
      auth: {
        headers: () => ({ authorization: 'Bearer t' }),
        refresh: () => Promise.reject(new Error('refresh failed')),
      },
    },
    async run(w) {
      w.primary.next(answer(401));
      const outcome = await w.run(read);
      expectThat(outcome.status === 'failed', 'failed');
    },
  },
  {
    name: 'a 401 without auth ends unauthorized',
    takes: ['request.active.evaluating always #2'],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(answer(401));
      const outcome = await w.run(read);
      expectThat(outcome.status === 'failed' && outcome.reason === 'unauthorized', 'unauthorized');
    },
  },
  (() => {
    // Settled by the scenario; made anew for each run.
    let headersLater = later<Record<string, string>>();
    return {
      name: 'the device goes offline while auth.headers() is fetched: nothing is sent',
      takes: [
        'originHealth connectivity.changed #0',
        'request.active connectivity.offline #0',
        'request.active.evaluating always #3',
        'outbox connectivity.changed #0',
      ],
      options: {
        policy: policy(),
        auth: {
          headers: () => headersLater.promise,
          refresh: async () => {},
        },
      },
      async run(w) {
        headersLater = later();
        const pending = w.client.request(read);
        await w.idle();
        w.connectivity.set('offline');
        headersLater.resolve({ authorization: 'Bearer t' });
        const outcome = await w.drive(pending);
        expectThat(outcome.status === 'failed' && outcome.reason === 'offline', 'failed offline');
        expectThat(w.primary.received === 0, 'nothing sent');
      },
    } satisfies Scenario;
  })(),
  {
    name: 'a 404 is not retried',
    takes: ['request.active.evaluating always #4'],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(answer(404));
      const outcome = await w.run(read);
      expectThat(outcome.status === 'failed' && outcome.attempts === 1, 'failed after one attempt');
    },
  },
  {
    name: 'a keyless write answered 503 goes to reconcile, which says applied',
    takes: [
      'request.active.evaluating always #5',
      'request.active.reconciling xstate.done.actor.reconcile #0',
    ],
    options: { policy: policy(), reconcile: async () => ({ status: 'applied' }) },
    async run(w) {
      w.primary.next(answer(503));
      const outcome = await w.run(keylessWrite);
      expectThat(outcome.status === 'succeeded' && outcome.reconciled === true, 'reconciled');
    },
  },
  {
    name: 'reconcile says not applied: the write is sent again',
    takes: ['request.active.reconciling xstate.done.actor.reconcile #1'],
    options: { policy: policy(), reconcile: async () => ({ status: 'not-applied' }) },
    async run(w) {
      w.primary.next(answer(503));
      const outcome = await w.run(keylessWrite);
      expectThat(outcome.status === 'succeeded' && outcome.attempts === 2, 'succeeded at the 2nd attempt');
    },
  },
  {
    name: 'reconcile cannot tell',
    takes: ['request.active.reconciling xstate.done.actor.reconcile #2'],
    options: { policy: policy(), reconcile: async () => ({ status: 'unknown' }) },
    async run(w) {
      w.primary.next(answer(503));
      const outcome = await w.run(keylessWrite);
      expectThat(outcome.status === 'failed' && outcome.reason === 'unsafe-to-replay', 'unsafe-to-replay');
    },
  },
  {
    name: 'reconcile throws',
    takes: ['request.active.reconciling xstate.error.actor.reconcile #0'],
    options: { policy: policy(), reconcile: () => Promise.reject(new Error('reconcile failed')) },
    async run(w) {
      w.primary.next(answer(503));
      const outcome = await w.run(keylessWrite);
      expectThat(outcome.status === 'failed', 'failed');
    },
  },
  {
    name: 'a keyless write answered 503 without reconcile is not sent again',
    takes: ['request.active.evaluating always #6'],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(answer(503));
      const outcome = await w.run(keylessWrite);
      expectThat(outcome.status === 'failed' && outcome.reason === 'unsafe-to-replay', 'unsafe-to-replay');
      expectThat(w.primary.received + w.backup.received === 1, 'sent once');
    },
  },
  {
    name: 'the device went offline during an attempt that then timed out',
    takes: [
      'request.active.attempting xstate.after.attemptTimeout.request.active.attempting #0',
      'request.active.evaluating always #7',
    ],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(hang);
      const pending = w.client.request(read);
      await w.idle();
      w.connectivity.set('offline');
      const outcome = await w.drive(pending);
      expectThat(outcome.status === 'failed' && outcome.reason === 'offline', 'failed offline');
    },
  },
  {
    name: 'the last attempt fails',
    takes: ['request.active.evaluating always #8'],
    // The one attempt is the request's own policy, laid over its route's (two) and the client's (three).
    options: {
      policy: policy(),
      routes: [{ id: 'reads', match: { method: 'GET' }, policy: { attempts: { max: 2 } } }],
    },
    async run(w) {
      w.primary.next(answer(503));
      const outcome = await w.run({ ...read, policy: { attempts: { max: 1 } } });
      expectThat(
        outcome.status === 'failed' && outcome.reason === 'attempts-exhausted',
        'attempts-exhausted',
      );
    },
  },
  {
    name: 'a Retry-After longer than the budget: the read goes to the backup',
    takes: ['request.active.evaluating always #9'],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(answer(503, { 'retry-after': '3600' }));
      const outcome = await w.run(read);
      expectThat(outcome.status === 'succeeded' && w.backup.received === 1, 'succeeded on the backup');
    },
  },
  {
    name: 'both origins held past the budget: the PUT ends, and so does the next one, sending nothing',
    takes: ['request.active.checkingHold always #2', 'request.active.checkingHold always #4'],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(answer(503, { 'retry-after': '3600' }));
      w.backup.next(answer(503, { 'retry-after': '3600' }));
      // A PUT's next origin is the held primary, so it takes the backup as the alternative free of holds.
      const first = await w.run(put);
      expectThat(
        first.status === 'failed' && first.reason === 'retry-after-exceeds-budget',
        'retry-after-exceeds-budget',
      );
      const sent = w.primary.received + w.backup.received;
      const second = await w.run(read);
      expectThat(
        second.status === 'failed' &&
          second.reason === 'retry-after-exceeds-budget' &&
          w.primary.received + w.backup.received === sent,
        'the next read ended at once, nothing sent',
      );
    },
  },
  {
    name: 'a RateLimit quota spent until past the budget: the next read ends throttled, sending nothing',
    takes: ['request.active.checkingHold always #3'],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(answer(200, { ratelimit: '"default";r=0;t=3600' }));
      const first = await w.run(read);
      expectThat(first.status === 'succeeded', 'the first read succeeded');
      const sent = w.primary.received + w.backup.received;
      const second = await w.run(read);
      expectThat(
        second.status === 'failed' &&
          second.reason === 'throttled' &&
          w.primary.received + w.backup.received === sent,
        'throttled, nothing sent',
      );
    },
  },
  {
    name: 'a keyed write held past the budget stays with its origin and ends',
    takes: ['request.active.evaluating always #10'],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(answer(503, { 'retry-after': '3600' }));
      const outcome = await w.run(keyedWrite);
      // It may have reached the primary: it is pinned there (no switch in the middle of a write).
      expectThat(
        outcome.status === 'failed' &&
          outcome.reason === 'retry-after-exceeds-budget' &&
          w.backup.received === 0,
        'retry-after-exceeds-budget, nothing sent to the backup',
      );
    },
  },
  {
    name: 'a hold within the budget: a new request waits for it, then is sent',
    takes: [
      'request.active.checkingHold always #1',
      'request.active.holding xstate.after.holdDelay.request.active.holding #0',
    ],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(answer(503, { 'retry-after': '2' }));
      const first = w.client.request(read);
      await w.idle();
      // The first read waits out its Retry-After; a read begun now meets the origin's hold.
      const second = w.client.request(read);
      const [a, b] = await Promise.all([w.drive(first), w.drive(second)]);
      expectThat(
        a.status === 'succeeded' && b.status === 'succeeded' && w.clock.now() >= 2_000,
        'both succeeded once the hold ended',
      );
    },
  },
  {
    name: 'the device goes offline while a request waits for a hold',
    takes: ['request.active.holding connectivity.offline #0'],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(answer(503, { 'retry-after': '2' }));
      const first = w.client.request(read);
      await w.idle();
      const second = w.client.request(read);
      await w.idle();
      w.connectivity.set('offline');
      const [a, b] = await Promise.all([w.drive(first), w.drive(second)]);
      expectThat(
        a.status === 'failed' && a.reason === 'offline' && b.status === 'failed' && b.reason === 'offline',
        'both failed offline',
      );
    },
  },
  {
    name: 'a backoff that no longer fits in the budget',
    takes: ['originHealth.onPrimary.healthy attempt.failed #1', 'request.active.evaluating always #12'],
    options: {
      policy: policy({
        attempts: { max: 5 },
        budgetMs: 1_000,
        backoff: { initialMs: 400, maxMs: 5_000, multiplier: 2, jitter: 'none' },
      }),
    },
    async run(w) {
      w.primary.fallback = answer(503);
      w.backup.fallback = answer(503);
      const outcome = await w.run(put);
      expectThat(outcome.status === 'failed' && outcome.reason === 'budget-exhausted', 'budget-exhausted');
    },
  },
  {
    name: 'a retry the retry budget refuses',
    takes: ['request.active.claimingRetry xstate.done.actor.claimRetry #1'],
    options: { policy: policy({ retryBudget: { percent: 0, minConcurrency: 0 } }) },
    async run(w) {
      w.primary.next(answer(503));
      const outcome = await w.run(put);
      expectThat(outcome.status === 'failed' && outcome.reason === 'retry-budget-exhausted', 'refused');
    },
  },
  {
    name: 'the device goes offline during a backoff',
    takes: ['request.active.backingOff connectivity.offline #0'],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(answer(503));
      const pending = w.client.request(read);
      await w.idle();
      w.connectivity.set('offline');
      const outcome = await w.drive(pending);
      expectThat(outcome.status === 'failed' && outcome.reason === 'offline', 'failed offline');
    },
  },
  {
    name: 'the caller cancels an attempt in flight',
    takes: ['request.active request.cancel #0'],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(hang);
      const controller = new AbortController();
      const pending = w.client.request({ ...read, signal: controller.signal });
      await w.idle();
      controller.abort();
      const outcome = await w.drive(pending);
      expectThat(outcome.status === 'failed' && outcome.reason === 'cancelled', 'cancelled');
    },
  },
  {
    name: 'the budget runs out with an attempt in flight',
    takes: ['request.active xstate.after.requestBudget.request.active #0'],
    options: { policy: policy({ budgetMs: 1_000 }) },
    async run(w) {
      // The second attempt starts 100 ms into the budget; its timeout would come 100 ms after the budget's end.
      w.primary.next(answer(503), hang);
      const outcome = await w.run(put);
      expectThat(outcome.status === 'failed' && outcome.reason === 'budget-exhausted', 'budget-exhausted');
    },
  },
  (() => {
    // Settled by the scenario; made anew for each run.
    let reconcileLater = later<{ status: 'unknown' }>();
    return {
      name: 'the budget runs out while reconcile is asked',
      takes: ['request.active xstate.after.requestBudget.request.active #1'],
      options: { policy: policy({ budgetMs: 1_000 }), reconcile: () => reconcileLater.promise },
      async run(w) {
        reconcileLater = later();
        w.primary.next(answer(503));
        const outcome = await w.run(keylessWrite);
        reconcileLater.resolve({ status: 'unknown' });
        expectThat(outcome.status === 'failed' && outcome.reason === 'budget-exhausted', 'budget-exhausted');
      },
    } satisfies Scenario;
  })(),
  {
    name: 'offline, then online again, during an attempt',
    takes: ['request.active connectivity.online #0'],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(hang);
      const pending = w.client.request(read);
      await w.idle();
      w.connectivity.set('offline');
      w.connectivity.set('online');
      const outcome = await w.drive(pending);
      expectThat(outcome.status === 'succeeded', 'succeeded after the attempt timed out');
    },
  },
  {
    name: 'the network changes under a read in flight: it is handed over to a new attempt',
    takes: ['request.active.attempting connectivity.changed #0', 'request.active.handingOver always #2'],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(hang);
      const pending = w.client.request(read);
      await w.idle();
      w.connectivity.set('changed');
      const outcome = await w.drive(pending);
      expectThat(outcome.status === 'succeeded' && outcome.attempts === 2, 'succeeded at the 2nd attempt');
    },
  },
  {
    name: 'the network changes under a write in flight: it goes on',
    takes: ['request.active.attempting connectivity.changed #1'],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(hang);
      const pending = w.client.request(keyedWrite);
      await w.idle();
      w.connectivity.set('changed');
      await w.drive(pending);
    },
  },
  {
    name: 'the network changes under a read while the device is offline',
    takes: ['request.active.handingOver always #0'],
    options: { policy: policy() },
    async run(w) {
      w.primary.next(hang);
      const pending = w.client.request(read);
      await w.idle();
      w.connectivity.set('offline');
      w.connectivity.set('changed');
      const outcome = await w.drive(pending);
      expectThat(outcome.status === 'failed' && outcome.reason === 'offline', 'failed offline');
    },
  },
  {
    name: 'the network changes under the last attempt of a read',
    takes: ['request.active.handingOver always #1'],
    options: { policy: policy({ attempts: { max: 1 } }) },
    async run(w) {
      w.primary.next(hang);
      const pending = w.client.request(read);
      await w.idle();
      w.connectivity.set('changed');
      const outcome = await w.drive(pending);
      expectThat(outcome.status === 'failed', 'failed');
    },
  },
  {
    name: 'a write with no origin that takes writes',
    takes: ['request.active.choosingOrigin xstate.done.actor.chooseOrigin #3'],
    options: { policy: policy(), origins: { primary: { accepts: 'reads' }, backup: false } },
    async run(w) {
      const outcome = await w.run(keyedWrite);
      expectThat(outcome.status === 'failed' && outcome.reason === 'no-healthy-origin', 'no-healthy-origin');
    },
  },
  (() => {
    // Settled by the scenario; made anew for each run.
    let refreshLater = later<void>();
    return {
      name: 'the device goes offline while auth is refreshed: no origin is chosen',
      takes: ['request.active.choosingOrigin xstate.done.actor.chooseOrigin #0'],
      options: {
        policy: policy(),
        auth: {
          headers: () => ({ authorization: 'Bearer t' }),
          refresh: () => refreshLater.promise,
        },
      },
      async run(w) {
        refreshLater = later();
        w.primary.next(answer(401));
        const pending = w.client.request(read);
        await w.idle();
        w.connectivity.set('offline');
        refreshLater.resolve();
        const outcome = await w.drive(pending);
        expectThat(outcome.status === 'failed' && outcome.reason === 'offline', 'failed offline');
        expectThat(w.primary.received === 1, 'sent once');
      },
    } satisfies Scenario;
  })(),
  {
    name: "the app's transport throws",
    takes: ['request.active.attempting xstate.error.actor.transport #0'],
    options: { policy: policy() },
    async run(w) {
      w.rejectSends(1);
      const outcome = await w.run(read);
      expectThat(outcome.status === 'succeeded' || outcome.status === 'failed', 'an end');
    },
  },
  {
    name: 'a durable write that fails is deferred to the outbox, which sends it later',
    takes: [
      'outbox outbox.enqueued #0',
      'outbox.running outbox.flush #0',
      'outbox.running send.ended #0',
      'outbox.running commit.succeeded #0',
      'outbox.running.lease.released always #0',
      'outbox.running.lease.acquiring xstate.done.actor.acquireLease #0',
      'outbox.running.lease.rescanning xstate.done.actor.rescanEntries #0',
      'outbox.running.lease.held always #0',
      'outbox.running.lease.held always #1',
      'outbox.running.lease.releasing xstate.done.actor.releaseLease #0',
      'outbox.running.timer.idle outbox.rearm #0',
      'outbox.running.timer.armed outbox.rearm #0',
      'outbox.running.timer.armed outbox.rearm #1',
    ],
    options: { policy: policy({ attempts: { max: 1 } }) },
    async run(w) {
      w.primary.next(answer(503));
      const outcome = await w.run({ ...keyedWrite, lifetime: 'durable' });
      expectThat(outcome.status === 'deferred', 'deferred');
      await w.drive(w.client.outbox.flush());
      expectThat((await w.client.outbox.size()) === 0, 'sent from the outbox');
    },
  },
];

/**
 * Health thresholds small enough to cross in a few requests; probes every 500 ms, failed over for 1 s, and 2 s,
 * 4 s, ... (no jitter) after failed probes in a row.
 */
const health = (changes: Partial<NonNullable<PolicyInput['health']>> = {}): PolicyInput =>
  policy({
    health: {
      suspectAfter: 1,
      failoverAfter: 2,
      recoverAfter: 1,
      minRequests: 100,
      minFailedOverMs: 1_000,
      maxFailedOverMs: 8_000,
      probeSuccesses: 2,
      probeIntervalMs: 500,
      probeTimeoutMs: 500,
      reprobeAfterMs: 2_000,
      reprobeJitter: 'none',
      ...changes,
    },
  });

export const healthScenarios: Scenario[] = [
  {
    name: 'the primary fails twice: suspect, failed over; two good probes bring traffic back',
    takes: [
      'originHealth.onPrimary.suspect attempt.failed #0',
      'originHealth.failedOver attempt.failed #0',
      'originHealth.failedOver attempt.succeeded #0',
      'originHealth.failedOver xstate.after.failedOverTime.originHealth.failedOver #0',
      'originHealth.probingFailback attempt.failed #0',
      'originHealth.probingFailback attempt.succeeded #0',
      'originHealth.probingFailback.probing xstate.done.actor.probe #1',
      'originHealth.probingFailback.probing xstate.done.actor.probe #2',
      'originHealth.probingFailback.resting xstate.after.probeInterval.originHealth.probingFailback.resting #0',
    ],
    options: { policy: health() },
    async run(w) {
      w.primary.next(answer(503), answer(503));
      const first = await w.run(put);
      expectThat(first.status === 'succeeded' && first.origin === 'backup', 'failed over to the backup');
      expectThat(w.client.health().state === 'failedOver', 'failed over');
      w.backup.next(answer(404));
      await w.run(read);
      // The first probe succeeds; while the machine rests before the next, traffic still goes to the backup.
      await w.advance(1_000);
      expectThat(w.client.health().state === 'probingFailback', 'probing');
      await w.run(read);
      w.backup.next(answer(404));
      await w.run(read);
      await w.advance(500);
      expectThat(w.client.health().state === 'healthy', 'healthy again');
    },
  },
  {
    name: 'failed probes: a 503, a probe that never answers, a probe while offline',
    takes: [
      'originHealth.probingFailback.probing xstate.done.actor.probe #0',
      'originHealth.probingFailback.probing xstate.done.actor.probe #3',
      'originHealth.probingFailback.probing xstate.after.probeTimeout.originHealth.probingFailback.probing #0',
    ],
    options: { policy: health() },
    async run(w) {
      w.primary.next(answer(503), answer(503));
      await w.run(put);
      w.primary.next(answer(503));
      await w.advance(1_000);
      expectThat(w.client.health().state === 'failedOver', 'failed over again after a 503 probe');
      w.primary.next(hang);
      await w.advance(2_000);
      await w.advance(500);
      expectThat(w.client.health().state === 'failedOver', 'failed over again after a probe timeout');
      w.connectivity.set('offline');
      await w.advance(4_000);
      expectThat(w.client.health().state === 'probingFailback', 'resting after an inconclusive probe');
    },
  },
  {
    name: 'a suspect primary recovers, and stays suspect below the thresholds',
    takes: [
      'originHealth.onPrimary.suspect attempt.failed #1',
      'originHealth.onPrimary.suspect attempt.succeeded #0',
      'originHealth.onPrimary.suspect attempt.succeeded #1',
    ],
    options: { policy: health({ failoverAfter: 3, recoverAfter: 2 }) },
    async run(w) {
      w.primary.next(answer(503), answer(503));
      await w.run(put);
      expectThat(w.client.health().state === 'suspect', 'suspect');
      await w.run(read);
      expectThat(w.client.health().state === 'healthy', 'healthy again');
    },
  },
  {
    name: 'half the requests fail: failed over straight from healthy',
    takes: ['originHealth.onPrimary.healthy attempt.failed #0'],
    options: { policy: health({ suspectAfter: 3, failoverAfter: 5, minRequests: 2, failureRatio: 0.5 }) },
    async run(w) {
      await w.run(read);
      w.primary.next(answer(503));
      await w.run(read);
      expectThat(w.client.health().state === 'failedOver', 'failed over');
    },
  },
];

/** Durable work: backoff of 1 s, two attempts. */
const durable = (changes: Partial<NonNullable<PolicyInput['durable']>> = {}): PolicyInput =>
  policy({
    attempts: { max: 1 },
    durable: { initialMs: 1_000, maxMs: 1_000, maxAttempts: 2, ...changes },
  });
const durableWrite = { ...keyedWrite, lifetime: 'durable' } as const;
/** A send that may take 40 s: longer than a third of the lease (10 s), so the lease is renewed during it. */
const longSend: PolicyInput = {
  ...durable({ initialMs: 60_000, maxMs: 60_000 }),
  budgetMs: 60_000,
  timeouts: { attemptMs: 40_000, connectMs: 1_000 },
};

export const outboxScenarios: Scenario[] = [
  {
    name: 'the store cannot be read at start: read again after loadRetry',
    takes: [
      'outbox.loading xstate.error.actor.loadEntries #0',
      'outbox.loadFailed xstate.after.loadRetry.outbox.loadFailed #0',
    ],
    options: { policy: durable(), storeFaults: { list: 1 } },
    async run(w) {
      await w.advance(1_000);
      expectThat((await w.client.outbox.size()) === 0, 'loaded');
    },
  },
  {
    name: 'a deferred entry waits for its time (nextDue), then is sent',
    takes: ['outbox.running.timer.armed xstate.after.nextDue.outbox.running.timer.armed #0'],
    options: { policy: durable() },
    async run(w) {
      w.primary.next(answer(503));
      const outcome = await w.run(durableWrite);
      expectThat(outcome.status === 'deferred', 'deferred');
      await w.advance(1_000);
      expectThat((await w.client.outbox.size()) === 0, 'sent');
    },
  },
  {
    name: 'a dead-lettered entry retried by the app',
    takes: ['outbox.running outbox.retry #0'],
    options: { policy: durable() },
    async run(w) {
      w.primary.next(answer(503), answer(404));
      const outcome = await w.run(durableWrite);
      expectThat(outcome.status === 'deferred', 'deferred');
      await w.drive(w.client.outbox.flush());
      const [entry] = await w.client.outbox.list();
      expectThat(entry?.status === 'dead', 'dead-lettered');
      expectThat(await w.drive(w.client.outbox.retry(entry!.id)), 'revived');
      await w.drive(w.client.outbox.flush());
      expectThat((await w.client.outbox.size()) === 0, 'sent');
    },
  },
  {
    name: 'the device goes offline while the entry is read for its send: skipped',
    takes: ['outbox.running send.skipped #0'],
    options: { policy: durable() },
    async run(w) {
      w.primary.next(answer(503));
      const outcome = await w.run(durableWrite);
      expectThat(outcome.status === 'deferred', 'deferred');
      // The claim reads the entry (1st get), then the send reads it again (2nd get): held while going offline.
      const held = w.holdStore('get', 1);
      const flushed = w.client.outbox.flush();
      await held.reached;
      w.connectivity.set('offline');
      held.release();
      await w.idle();
      expectThat(w.primary.received === 1, 'not sent again');
      w.connectivity.set('online');
      await w.drive(flushed);
      await w.drive(w.client.outbox.flush());
      expectThat((await w.client.outbox.size()) === 0, 'sent once online');
    },
  },
  {
    name: 'the removal of a sent entry fails: the removal is written again after the hold-off, with no other send',
    takes: ['outbox.running commit.failed #0'],
    options: { policy: durable({ maxAttempts: 5 }) },
    async run(w) {
      w.primary.next(answer(503));
      await w.run(durableWrite);
      w.failStore('remove');
      await w.drive(w.client.outbox.flush());
      await w.advance(10_000);
      // The send succeeded: the removal is kept and written again after the hold-off, and nothing is sent again.
      expectThat(w.primary.received === 2, 'not sent again after the failed removal');
      expectThat((await w.client.outbox.size()) === 0, 'removed in the end');
    },
  },
  {
    name: 'the app removes an entry while it waits',
    takes: ['outbox.running entry.missing #0'],
    options: { policy: durable() },
    async run(w) {
      w.primary.next(answer(503));
      const outcome = await w.run(durableWrite);
      expectThat(outcome.status === 'deferred', 'deferred');
      expectThat(
        await w.drive(w.client.outbox.remove(outcome.status === 'deferred' ? outcome.entryId : '')),
        'removed',
      );
      await w.advance(2_000);
      expectThat(w.primary.received === 1, 'never sent again');
    },
  },
  {
    name: 'a background task drains: its time limit pauses the sends while one is in flight, then they go on',
    takes: ['outbox outbox.pause #0', 'outbox outbox.resume #0'],
    options: { policy: durable({ maxAttempts: 5 }) },
    async run(w) {
      w.primary.next(answer(503), hang);
      const outcome = await w.run(durableWrite);
      expectThat(outcome.status === 'deferred', 'deferred');
      // Its next send starts 1 s later and hangs until the attempt timeout (1 s): the limit passes meanwhile.
      const drained = w.client.outbox.drain({ timeLimitMs: 1_500 });
      const result = await w.drive(drained);
      expectThat(result.sent === 0 && result.pending === 1, 'nothing sent within the limit');
      await w.advance(2_000);
      expectThat((await w.client.outbox.size()) === 0, 'sent once the outbox went on');
    },
  },
  {
    name: 'another runner holds the lease: wait, ask again on flush, then after leaseRetry',
    takes: [
      'outbox.running.lease.acquiring xstate.done.actor.acquireLease #1',
      'outbox.running.lease.waitingForLease outbox.askForLease #0',
      'outbox.running.lease.waitingForLease xstate.after.leaseRetry.outbox.running.lease.waitingForLease #0',
    ],
    options: { policy: durable({ flushWaitMs: 1_000 }), outboxOwner: 'me' },
    async run(w) {
      w.primary.next(answer(503));
      await w.run(durableWrite);
      await w.store.acquireLease('other', 20_000, w.clock.now());
      await w.drive(w.client.outbox.flush());
      await w.drive(w.client.outbox.flush());
      await w.advance(30_000);
      expectThat((await w.client.outbox.size()) === 0, 'sent once the lease expired');
    },
  },
  {
    name: 'the store fails to give the lease, to rescan, and to take the lease back',
    takes: [
      'outbox.running.lease.acquiring xstate.error.actor.acquireLease #0',
      'outbox.running.lease.rescanning xstate.error.actor.rescanEntries #0',
      'outbox.running.lease.releasing xstate.error.actor.releaseLease #0',
    ],
    options: { policy: durable() },
    async run(w) {
      w.primary.next(answer(503));
      await w.run(durableWrite);
      w.failStore('acquireLease');
      await w.drive(w.client.outbox.flush());
      w.failStore('list');
      w.failStore('releaseLease');
      await w.advance(15_000);
      expectThat((await w.client.outbox.size()) === 0, 'sent');
    },
  },
  {
    name: 'a long send: the lease is renewed, then lost to another runner',
    takes: [
      'outbox.running.lease.held xstate.after.leaseRenewal.outbox.running.lease.held #0',
      'outbox.running.lease.renewing xstate.done.actor.renewLease #0',
      'outbox.running.lease.renewing xstate.done.actor.renewLease #1',
    ],
    options: { policy: longSend, outboxOwner: 'me' },
    async run(w) {
      w.primary.next(answer(503), hang);
      await w.run(durableWrite);
      const flushed = w.client.outbox.flush();
      await w.advance(10_000);
      // Another runner takes the lease (this one's lapsed, say, while the device slept).
      await w.store.releaseLease('me');
      await w.store.acquireLease('other', 60_000, w.clock.now());
      await w.advance(10_000);
      await w.drive(flushed);
    },
  },
  {
    name: 'a long send: the store fails to renew the lease',
    takes: ['outbox.running.lease.renewing xstate.error.actor.renewLease #0'],
    options: { policy: longSend },
    async run(w) {
      w.primary.next(answer(503), hang);
      await w.run(durableWrite);
      const flushed = w.client.outbox.flush();
      await w.idle();
      expectThat(w.primary.received === 2, 'the send on the wire');
      w.failStore('acquireLease');
      await w.advance(10_000);
      await w.drive(flushed);
    },
  },
];

/** The id of the one entry in the outbox. */
async function onlyEntry(w: World): Promise<string> {
  const [entry] = await w.client.outbox.list();
  expectThat(entry !== undefined, 'an entry in the outbox');
  return entry!.id;
}

/**
 * An entry's lifecycle (the `outboxEntry` machine) at each of its turns: every answer its claim, send and
 * decision can get through the client, and the app removing it at each step.
 */
export const entryScenarios: Scenario[] = [
  {
    name: 'another runner holds the entry (a store with per-entry claims): nothing sent until its claim ends',
    takes: ['outboxEntry.claiming commit.succeeded #0'],
    options: { policy: durable({ maxAttempts: 5 }), anotherRunnerHoldsUntil: 5_000 },
    async run(w) {
      w.primary.next(answer(503));
      const outcome = await w.run(durableWrite);
      // Its first claim is answered `taken` (until 5 s): it is sent only then, once, and deferred.
      expectThat(outcome.status === 'deferred', 'deferred');
      expectThat(w.clock.now() >= 5_000 && w.primary.received === 1, 'first sent once the claim ended');
      await w.advance(10_000);
      expectThat((await w.client.outbox.size()) === 0, 'sent once the claim ended');
      expectThat(w.primary.received === 2, 'sent once');
    },
  },
  {
    name: 'the store fails to count an attempt (the claim): held off, then counted and sent',
    takes: ['outboxEntry.claiming commit.failed #0'],
    options: { policy: durable({ maxAttempts: 5 }) },
    async run(w) {
      w.primary.next(answer(503));
      await w.run(durableWrite);
      // The claim reads the entry, then writes the count: the write fails.
      w.failStore('update');
      await w.drive(w.client.outbox.flush());
      expectThat(w.primary.received === 1, 'nothing sent without its count');
      await w.advance(10_000);
      expectThat((await w.client.outbox.size()) === 0, 'sent after the hold-off');
    },
  },
  {
    name: 'another runner counted an attempt meanwhile: the claim finds the store moved on, and takes its count',
    takes: ['outboxEntry.claiming commit.succeeded #1'],
    options: { policy: durable({ maxAttempts: 5 }) },
    async run(w) {
      w.primary.next(answer(503));
      await w.run(durableWrite);
      const [entry] = await w.store.list();
      await w.store.update({ ...entry!, attempts: entry!.attempts + 1 });
      await w.drive(w.client.outbox.flush());
      await w.advance(10_000);
      expectThat((await w.client.outbox.size()) === 0, 'sent with the count the store had');
      expectThat(w.primary.received === 2, 'sent once more');
    },
  },
  {
    name: 'the device goes offline while the attempt is counted: nothing sent, the count kept for the next send',
    takes: [
      'outboxEntry.claiming connectivity.changed #0',
      'outboxEntry.claiming commit.succeeded #2',
      'outboxEntry.starting always #1',
    ],
    options: { policy: durable() },
    async run(w) {
      w.primary.next(answer(503));
      await w.run(durableWrite);
      const held = w.holdStore('get');
      const flushed = w.client.outbox.flush();
      await held.reached;
      w.connectivity.set('offline');
      held.release();
      await w.idle();
      expectThat(w.primary.received === 1, 'not sent while offline');
      w.connectivity.set('online');
      await w.drive(flushed);
      await w.drive(w.client.outbox.flush());
      expectThat((await w.client.outbox.size()) === 0, 'sent once online');
      expectThat(w.primary.received === 2, 'sent once');
    },
  },
  {
    name: 'the app removes an entry while its attempt is counted, while it is sent, and while its outcome is written',
    takes: [
      'outboxEntry.claiming entry.missing #0',
      'outboxEntry.sending entry.missing #0',
      'outboxEntry.committing entry.missing #0',
    ],
    options: { policy: durable({ maxAttempts: 5 }) },
    async run(w) {
      // Each time the store is read (the claim's read, the send's, the reschedule's) the app removes the entry.
      for (const skip of [0, 1, 2]) {
        // The request's own attempt fails (deferred); with the reschedule's read held, the send fails too.
        w.primary.next(...(skip === 2 ? [answer(503), answer(503)] : [answer(503)]));
        const outcome = await w.run(durableWrite);
        expectThat(outcome.status === 'deferred', 'deferred');
        const id = await onlyEntry(w);
        const held = w.holdStore('get', skip);
        const flushed = w.client.outbox.flush();
        await held.reached;
        expectThat(await w.client.outbox.remove(id), 'removed');
        held.release();
        await w.drive(flushed);
        expectThat((await w.client.outbox.size()) === 0, 'gone');
      }
      expectThat(w.primary.received === 4, 'sent only by the requests and the one send begun');
    },
  },
];

export const scenarios: Scenario[] = [
  ...requestScenarios,
  ...healthScenarios,
  ...outboxScenarios,
  ...entryScenarios,
];
