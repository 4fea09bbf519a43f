import type { MachineLogic } from '../../machines/machine-logic.js';
import type { CommitOutcome } from '../../machines/outbox/outbox.actors.js';
import { outboxLogic } from '../../machines/outbox/outbox.logic.js';
import { commitEntryReply, sendEntryReply, type Settled } from '../../machines/outbox/outbox.replies.js';
import { outboxTable } from '../../machines/outbox/outbox.table.js';
import type {
  CommitEntryInput,
  OutboxEntryRecord,
  OutboxEntrySummary,
  OutboxMachineInput,
  SendEntryInput,
  SendResult,
} from '../../machines/outbox/outbox.types.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { durableBackoffMs, wakesWhenOnline } from '../../src/policy/durable-backoff.js';
import type { Policy } from '../../src/policy/policy.js';
import type { Call, DrivenRun, Outcome } from './driven-run.js';
import type { MachineModel } from './machine-model.js';

/**
 * The outbox machine with `entries` durable entries (each enqueued at most once per path, or found in the
 * store), every answer of the store (reads, lease, writes: done, missing, stale, failed) and of each send (sent,
 * failed retryable or not, with Retry-After, offline, missing, skipped, thrown), flushes, retries, connectivity,
 * lease requests and close. Nothing carries a time: time moves only by the machine's own timers.
 */
const record = (id: string, now: number, changes: Partial<OutboxEntryRecord> = {}): OutboxEntryRecord => ({
  id,
  createdAt: now,
  attempts: 0,
  nextAttemptAt: now,
  status: 'pending',
  ...changes,
});

const ok = (value: unknown): Outcome => ({ ok: true, value });
const thrown = (src: string): Outcome => ({ ok: false, error: new Error(`${src} failed`) });
const failure = (
  cls: 'unavailable' | 'client-error' | 'offline' | 'rate-limited',
  retryAfterMs?: number,
) => ({
  class: cls,
  requestSent: cls === 'offline' ? ('no' as const) : ('yes' as const),
  origin: 'primary',
  message: cls,
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
});
const failed = (f: ReturnType<typeof failure>, retryable: boolean, endedOffline?: boolean): SendResult => ({
  result: 'failed',
  failure: f,
  attempts: 1,
  retryable,
  ...(endedOffline ? { endedOffline } : {}),
});

function answers(ids: readonly string[], call: Call, run: DrivenRun) {
  const now = run.actor.context.now as number;
  const of = (label: string, outcome: () => Outcome) => ({ label: `${call.src}: ${label}`, outcome });
  switch (call.src) {
    case 'loadEntries':
      return [
        of('empty', () => ok({ entries: [] })),
        of('empty, complete', () => ok({ entries: [], complete: true })),
        of('all', () => ok({ entries: ids.map((id) => record(id, now)) })),
        of('throws', () => thrown('loadEntries')),
      ];
    case 'acquireLease':
      return [
        of('held', () => ok({ held: true })),
        of('refused', () => ok({ held: false })),
        of('throws', () => thrown('acquireLease')),
      ];
    case 'releaseLease':
      return [of('done', () => ok(undefined)), of('throws', () => thrown('releaseLease'))];
    case 'commitEntry': {
      const { id } = call.input as CommitEntryInput;
      return [
        of('committed', () => ok({ status: 'committed' })),
        of('missing', () => ok({ status: 'missing' })),
        of('stale', () =>
          ok({ status: 'stale', stored: record(id, now, { attempts: 1, nextAttemptAt: now + 100 }) }),
        ),
        of('throws', () => thrown('commitEntry')),
      ];
    }
    case 'sendEntry':
      return [
        of('sent', () => ok({ result: 'sent' })),
        of('503', () => ok(failed(failure('unavailable'), true))),
        of('404', () => ok(failed(failure('client-error'), false))),
        of('429 Retry-After 100', () => ok(failed(failure('rate-limited', 100), true))),
        of('offline', () => ok(failed(failure('offline'), true, true))),
        of('missing', () => ok('missing')),
        of('skipped', () => ok('skipped')),
        of('throws', () => thrown('sendEntry')),
      ];
    default:
      return [];
  }
}

function events(ids: readonly string[], type: string, run: DrivenRun) {
  switch (type) {
    case 'outbox.enqueued':
      // Each entry is written once per path: the same id again is ignored, or would start the same story anew.
      return ids
        .filter((id) => !run.sent.some((e) => e.type === type && (e.entry as { id: string }).id === id))
        .map((id) => ({ type, entry: record(id, run.actor.context.now as number) }));
    case 'outbox.retry':
      return ids.map((id) => ({ type, id }));
    case 'connectivity.changed':
      return [true, false].map((online) => ({ type, online }));
    default:
      return [{ type }];
  }
}

/** Past this many store failures in a row the hold-off no longer grows: more say nothing new. */
function storeFailuresCap(durable: Policy['durable']): number {
  let n = 1;
  while (n < 64 && durableBackoffMs(durable, n + 1) !== durableBackoffMs(durable, n)) n++;
  return n;
}

/**
 * Times relative to `now` (all the machine compares them with): an entry's age capped past its expiry, a time
 * already passed as 0 (due), a hold-off already over as none. Of a rescheduling write's failure only what the
 * summary takes from it; `storeFailures` capped where the hold-off stops growing. Left out: the policy and the
 * lease time, fixed per input.
 */
function abstractContext(context: Record<string, unknown>): unknown {
  const now = context.now as number;
  const durable = (context.policy as Policy).durable;
  const ahead = (t: number | undefined) => (t === undefined ? undefined : Math.max(0, t - now));
  const entries = (context.entries as OutboxEntrySummary[]).map((e) => ({
    ...e,
    createdAt: Math.min(now - e.createdAt, durable.maxAgeMs + 1),
    nextAttemptAt: ahead(e.nextAttemptAt),
    heldUntil: e.heldUntil !== undefined && e.heldUntil > now ? e.heldUntil - now : undefined,
    commit: e.commit && {
      ...e.commit,
      ...('nextAttemptAt' in e.commit ? { nextAttemptAt: ahead(e.commit.nextAttemptAt) } : {}),
      ...('createdAt' in e.commit ? { createdAt: now - e.commit.createdAt } : {}),
      ...('failure' in e.commit && e.commit.failure
        ? {
            failure: [wakesWhenOnline(e.commit.failure), e.commit.failure.retryAfterMs !== undefined],
            delayMs: 0,
          }
        : {}),
    },
  }));
  return {
    online: context.online,
    entries,
    storeFailures: Math.min(context.storeFailures as number, storeFailuresCap(durable)),
    wakeAt: ahead(context.wakeAt as number | undefined),
  };
}

const inFlight = (e: OutboxEntrySummary) =>
  e.status === 'claiming' || e.status === 'sending' || e.status === 'committing';

/**
 * The goal of check (a) for a machine that never ends by itself: closed, or quiescent (the lease given back,
 * no entry in flight, no store call or send waiting).
 */
function quiescent(run: DrivenRun): boolean {
  if (run.actor.status === 'done') return true;
  const value = run.actor.value as { running?: { lease: string } };
  return (
    value.running?.lease === 'released' &&
    run.pending().length === 0 &&
    !(run.actor.context.entries as OutboxEntrySummary[]).some(inFlight)
  );
}

export function outboxModel(bounds: { entries: number }): MachineModel {
  const ids = ['e0', 'e1', 'e2'].slice(0, bounds.entries);
  const inputs = [true, false].map((online) => {
    const input: OutboxMachineInput = {
      policy: definePolicy({
        durable: { initialMs: 100, maxMs: 100, maxAttempts: 2, maxAgeMs: 250, order: 'fifo', concurrency: 1 },
      }),
      now: 0,
      online,
      leaseTtlMs: 300,
    };
    return { label: online ? 'online' : 'offline', input: () => input };
  });
  return {
    name: `outbox (${bounds.entries} ${bounds.entries === 1 ? 'entry' : 'entries'})`,
    run: {
      table: outboxTable,
      logic: outboxLogic as unknown as MachineLogic<unknown, unknown>,
      invoked: ['loadEntries', 'acquireLease', 'releaseLease'],
      spawned: {
        commitEntry: (input: CommitEntryInput, outcome) =>
          commitEntryReply(input, outcome as Settled<CommitOutcome>),
        sendEntry: (input: SendEntryInput, outcome) =>
          sendEntryReply(input, outcome as Settled<SendResult | 'missing' | 'skipped'>),
      },
    },
    inputs,
    events: (type, run) => events(ids, type, run),
    answers: (call, run) => answers(ids, call, run),
    abstractContext,
    abstractCall: (call) => [call.src, (call.input as { id?: string } | undefined)?.id],
    pathKey: (run) =>
      run.sent.filter((e) => e.type === 'outbox.enqueued').map((e) => (e.entry as { id: string }).id),
    // On its own: by timers and answers, with no event from the caller (a close ends anything).
    goal: {
      name: 'closed or quiescent on its own',
      holds: quiescent,
      via: (stimulus) => stimulus.kind !== 'event',
    },
  };
}
