import { describe, expect, it } from 'vitest';
import * as actions from '../../machines/outbox-entry/outbox-entry.actions.js';
import { outboxEntryLogic } from '../../machines/outbox-entry/outbox-entry.logic.js';
import type {
  OutboxEntryMachineContext,
  OutboxEntryMachineEvent,
} from '../../machines/outbox-entry/outbox-entry.types.js';
import {
  commitEntryReply,
  entryRecordOf,
  replyOf,
  sendEntryReply,
} from '../../machines/outbox/outbox.replies.js';
import type { OutboxCommit, OutboxEntrySummary } from '../../machines/outbox/outbox.types.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { pendingSummary } from '../helpers/outbox-summaries.js';
import type { Failure } from '../../src/policy/failure.js';

// One outbox entry's lifecycle decisions, the replies of the outbox's children and the record the machine keeps,
// called as the machines call them on values written out here. Expected values come from docs/durable.md's
// rules as the comments state them (exponential waits from initialMs, maxAttempts counted with the failed
// attempt, never sooner than a Retry-After) and rules 1, 5, 6 and 9, worked out by hand.

const g = outboxEntryLogic.guards;

// Waits of 1, 2, 4 ... s; dead after 5 attempts or 1 hour.
const policy = definePolicy({
  durable: { backoff: 'exponential', initialMs: 1_000, maxMs: 60_000, maxAttempts: 5, maxAgeMs: 3_600_000 },
});

const entry = (changes: Partial<OutboxEntrySummary> = {}): OutboxEntrySummary =>
  pendingSummary('e1', { attempts: 1, status: 'sending', ...changes });
const context = (changes: Partial<OutboxEntryMachineContext> = {}): OutboxEntryMachineContext => ({
  policy,
  now: 10_000,
  online: true,
  entry: entry(),
  wrote: false,
  ...changes,
});
const failure = (changes: Partial<Failure> = {}): Failure => ({
  class: 'server-error',
  requestSent: 'yes',
  origin: 'https://api.example.test',
  message: '500',
  status: 500,
  ...changes,
});
const args = <E extends OutboxEntryMachineEvent>(c: OutboxEntryMachineContext, event: E) => ({
  context: c,
  event,
});

describe('an outbox entry’s first state', () => {
  it('a send starts `sending`, uncounted; a claim starts `claiming`; another write `committing`', () => {
    const base = { policy, now: 5, online: false, entry: entry({ status: 'pending' }) };
    expect(actions.initialEntryContext({ ...base, work: { send: { id: 'e1', attempt: 2 } } })).toEqual({
      policy,
      now: 5,
      online: false,
      wrote: false,
      entry: entry({ status: 'sending', counted: false }),
    });
    const claim: OutboxCommit = { op: 'claim', attempts: 2 };
    expect(actions.initialEntryContext({ ...base, work: { commit: claim } })).toEqual({
      policy,
      now: 5,
      online: false,
      wrote: false,
      commit: claim,
      entry: entry({ status: 'claiming', commit: claim }),
    });
    const remove: OutboxCommit = { op: 'remove', attempts: 1 };
    expect(actions.initialEntryContext({ ...base, work: { commit: remove } }).entry.status).toBe(
      'committing',
    );
    // A decision kept after a failed write is the write starting now: no longer kept.
    const kept = actions.initialEntryContext({
      ...base,
      entry: entry({ status: 'pending', decided: remove }),
      work: { commit: remove },
    });
    expect(kept.entry).toMatchObject({ status: 'committing', commit: remove });
    expect(kept.entry.decided).toBeUndefined();
  });
});

describe('an outbox entry’s decisions', () => {
  const answer = (changes: { at?: number; takenUntil?: number } = {}) =>
    ({ type: 'commit.succeeded', id: 'e1', ...changes }) as const;

  it('time never goes back: an answer stamped earlier keeps the entry’s time', () => {
    const c = context({ entry: entry({ status: 'claiming' }), commit: { op: 'claim', attempts: 2 } });
    expect(actions.recordClaimed(args(c, answer({ at: 12_000 }))).now).toBe(12_000);
    expect(actions.recordClaimed(args(c, answer({ at: 9_000 }))).now).toBe(10_000);
    expect(actions.recordClaimed(args(c, answer({ at: 10_000 }))).now).toBe(10_000);
    expect(actions.recordClaimed(args(c, answer())).now).toBe(10_000);
  });

  it('a claim counted: sent with the store’s count; counted offline: pending, its attempt kept for the next send', () => {
    const c = context({
      entry: entry({ status: 'claiming', attempts: 1, heldUntil: 5, taken: true, counted: true }),
      commit: { op: 'claim', attempts: 2 },
    });
    expect(actions.recordClaimed(args(c, answer()))).toEqual({
      now: 10_000,
      wrote: true,
      entry: entry({
        status: 'sending',
        attempts: 2,
        counted: false,
        commit: undefined,
        heldUntil: undefined,
        taken: undefined,
      }),
    });
    expect(actions.recordClaimedOffline(args(c, answer()))).toEqual({
      now: 10_000,
      wrote: true,
      entry: entry({
        status: 'pending',
        attempts: 2,
        counted: true,
        commit: undefined,
        heldUntil: undefined,
        taken: undefined,
      }),
    });
  });

  it('a claim taken elsewhere waits, pending, until the time the store gives', () => {
    const c = context({ entry: entry({ status: 'claiming' }), commit: { op: 'claim', attempts: 2 } });
    expect(actions.recordTakenElsewhere(args(c, answer({ takenUntil: 40_000 }))).entry).toMatchObject({
      status: 'pending',
      heldUntil: 40_000,
      taken: true,
      attempts: 1,
    });
  });

  it('a sent entry is removed with the count it had', () => {
    const c = context({ entry: entry({ attempts: 3 }) });
    expect(
      actions.decideOutcome(
        args(c, { type: 'send.ended', id: 'e1', result: { result: 'sent' }, at: 11_000 }),
      ),
    ).toEqual({
      now: 11_000,
      commit: { op: 'remove', attempts: 3 },
      entry: entry({ attempts: 3, status: 'committing', commit: { op: 'remove', attempts: 3 } }),
    });
  });

  it('a failed send is rescheduled by the durable backoff, its extra attempts counted (rule 1)', () => {
    const failed = failure();
    const c = context({ entry: entry({ attempts: 1 }) });
    const send = (result: Record<string, unknown>) =>
      actions.decideOutcome(
        args(c, {
          type: 'send.ended',
          id: 'e1',
          result: { result: 'failed', failure: failed, attempts: 1, retryable: true, ...result },
        } as never),
      ).commit;
    // One attempt, counted by the claim: after attempt 1 the wait is 1 s.
    expect(send({})).toEqual({
      op: 'reschedule',
      attempts: 1,
      nextAttemptAt: 11_000,
      delayMs: 1_000,
      failure: failed,
      failures: undefined,
      wakesWhenOnline: undefined,
    });
    // The send made 3 attempts: 3 counted, the wait after attempt 3 is 4 s.
    expect(send({ attempts: 3 })).toMatchObject({ attempts: 3, nextAttemptAt: 14_000, delayMs: 4_000 });
    // 2.7 attempts count as 2; 0 or NaN as the one the claim counted.
    expect(send({ attempts: 2.7 })).toMatchObject({ attempts: 2, delayMs: 2_000 });
    expect(send({ attempts: 0 })).toMatchObject({ attempts: 1, delayMs: 1_000 });
    expect(send({ attempts: Number.NaN })).toMatchObject({ attempts: 1, delayMs: 1_000 });
    // Never sooner than the server's Retry-After: the send's own, else its failure's (rule 5).
    expect(send({ retryAfterMs: 7_000 })).toMatchObject({ nextAttemptAt: 17_000, delayMs: 7_000 });
    const held = failure({ retryAfterMs: 8_000 });
    expect(send({ failure: held })).toMatchObject({ nextAttemptAt: 18_000, delayMs: 8_000 });
    expect(send({ failure: held, retryAfterMs: 3_000 })).toMatchObject({ delayMs: 3_000 });
    expect(send({ endedOffline: true, failures: [failed] })).toMatchObject({
      wakesWhenOnline: true,
      failures: [failed],
    });
  });

  it('a failed send is dead-lettered when not retryable or out of attempts', () => {
    const failed = failure({ status: 400, class: 'client-error' });
    const dead = (attempts: number, retryable: boolean) =>
      actions.decideOutcome(
        args(context({ entry: entry({ attempts }) }), {
          type: 'send.ended',
          id: 'e1',
          result: { result: 'failed', failure: failed, attempts: 1, retryable },
        }),
      ).commit;
    expect(dead(1, false)).toEqual({
      op: 'dead-letter',
      attempts: 1,
      reason: 'not-retryable',
      failure: failed,
      failures: undefined,
    });
    expect(dead(5, true)).toMatchObject({ op: 'dead-letter', attempts: 5, reason: 'attempts-exhausted' });
    expect(dead(4, true)).toMatchObject({ op: 'reschedule', attempts: 4 });
  });

  it('a skipped send is pending again, its attempt counted for the next send', () => {
    expect(actions.recordSkipped(args(context(), { type: 'send.skipped', id: 'e1', at: 10_500 }))).toEqual({
      now: 10_500,
      entry: entry({ status: 'pending', counted: true }),
    });
  });

  it('a written reschedule: pending at its time, woken by going online only after a failure of the network path', () => {
    const written = (commit: OutboxCommit) =>
      actions.recordWritten(
        args(context({ entry: entry({ status: 'committing', commit }), commit }), answer()),
      ).entry;
    const reschedule = { op: 'reschedule', attempts: 2, nextAttemptAt: 20_000, delayMs: 2_000 } as const;
    expect(written({ ...reschedule, failure: failure() })).toEqual(
      entry({
        status: 'pending',
        attempts: 2,
        nextAttemptAt: 20_000,
        wakesWhenOnline: false,
        heldByServer: false,
        counted: false,
        commit: undefined,
        heldUntil: undefined,
        taken: undefined,
      }),
    );
    // Nothing reached a server because the path failed: going online wakes it (rule 6).
    const refused: Failure = {
      class: 'connect',
      requestSent: 'no',
      origin: 'https://api.example.test',
      message: 'refused',
    };
    expect(written({ ...reschedule, failure: refused })).toMatchObject({ wakesWhenOnline: true });
    // The send ended offline: it wakes too, whatever its failure.
    expect(written({ ...reschedule, failure: failure(), wakesWhenOnline: true })).toMatchObject({
      wakesWhenOnline: true,
    });
    expect(written({ ...reschedule, failure: failure(), wakesWhenOnline: false })).toMatchObject({
      wakesWhenOnline: false,
    });
    // A Retry-After holds it: flush does not bring it forward (rule 5).
    expect(written({ ...reschedule, failure: failure({ retryAfterMs: 5_000 }) })).toMatchObject({
      heldByServer: true,
    });
  });

  it('a written dead-letter, revival and removal', () => {
    const written = (commit: OutboxCommit, changes: Partial<OutboxEntrySummary> = {}) =>
      actions.recordWritten(
        args(
          context({ entry: entry({ status: 'committing', commit, ...changes }), commit }),
          answer({ at: 10_100 }),
        ),
      );
    expect(written({ op: 'dead-letter', attempts: 5, reason: 'attempts-exhausted' }).entry).toMatchObject({
      status: 'dead',
      attempts: 5,
      deadReason: 'attempts-exhausted',
    });
    expect(
      written(
        { op: 'revive', createdAt: 9_000, nextAttemptAt: 9_500 },
        { status: 'dead', attempts: 5, deadReason: 'expired', wakesWhenOnline: true, heldByServer: true },
      ),
    ).toEqual({
      now: 10_100,
      wrote: true,
      entry: entry({
        status: 'pending',
        attempts: 0,
        createdAt: 9_000,
        nextAttemptAt: 9_500,
        wakesWhenOnline: false,
        heldByServer: false,
        deadReason: undefined,
        counted: false,
        commit: undefined,
        heldUntil: undefined,
        taken: undefined,
      }),
    });
    // Removed: the entry as it was, its write done.
    expect(written({ op: 'remove', attempts: 3 }, { attempts: 3 }).entry).toEqual(
      entry({
        status: 'committing',
        attempts: 3,
        counted: false,
        commit: undefined,
        heldUntil: undefined,
        taken: undefined,
      }),
    );
  });

  it('a failed write leaves the entry as the store has it: dead if it was a revival, else pending', () => {
    const failed = (commit: OutboxCommit | undefined) =>
      actions.recordWriteFailed(
        args(context({ entry: entry({ status: 'committing', commit, taken: true }), commit }), {
          type: 'commit.failed',
          id: 'e1',
          error: { name: 'Error' },
          at: 10_200,
        }),
      );
    expect(failed({ op: 'revive', createdAt: 1, nextAttemptAt: 1 })).toEqual({
      now: 10_200,
      entry: entry({ status: 'dead', commit: undefined, taken: undefined }),
    });
    expect(failed({ op: 'remove', attempts: 1 }).entry?.status).toBe('pending');
    expect(failed(undefined).entry?.status).toBe('pending');
    // A claim or a revival is asked again from the start; a decision is kept, to be written again unsent.
    expect(failed({ op: 'claim', attempts: 2 }).entry).toMatchObject({
      status: 'pending',
      decided: undefined,
    });
    expect(failed({ op: 'revive', createdAt: 1, nextAttemptAt: 1 }).entry?.decided).toBeUndefined();
    expect(failed(undefined).entry?.decided).toBeUndefined();
    const removal: OutboxCommit = { op: 'remove', attempts: 1 };
    expect(failed(removal).entry).toMatchObject({ status: 'pending', decided: removal });
  });

  it('missing, connectivity, the reports and clearWrote', () => {
    expect(actions.recordMissing(args(context(), { type: 'entry.missing', id: 'e1', at: 10_300 }))).toEqual({
      now: 10_300,
    });
    expect(
      actions.recordConnectivity(
        args(context(), { type: 'connectivity.changed', online: false, at: 10_400 }),
      ),
    ).toEqual({ now: 10_400, online: false });
    const c = context({ wrote: true, commit: { op: 'remove', attempts: 1 } });
    expect(actions.reportProgress({ context: c })).toEqual({
      type: 'entry.progressed',
      id: 'e1',
      entry: c.entry,
      wrote: true,
      at: 10_000,
    });
    expect(actions.reportSettled({ context: c }, { outcome: 'sent' })).toEqual({
      type: 'entry.settled',
      id: 'e1',
      outcome: 'sent',
      entry: c.entry,
      commit: { op: 'remove', attempts: 1 },
      wrote: true,
      at: 10_000,
    });
    expect(actions.clearWrote()).toEqual({ wrote: false });
  });
});

describe('an outbox entry’s guards', () => {
  const on = (c: OutboxEntryMachineContext, event: Record<string, unknown> = {}) =>
    ({ context: c, event: { type: 'commit.succeeded', id: 'e1', ...event } }) as never;
  it('read the entry’s status, the answer, connectivity and the write in flight', () => {
    expect(g.startsClaiming(on(context({ entry: entry({ status: 'claiming' }) })))).toBe(true);
    expect(g.startsClaiming(on(context()))).toBe(false);
    expect(g.startsSending(on(context()))).toBe(true);
    expect(g.startsSending(on(context({ entry: entry({ status: 'claiming' }) })))).toBe(false);
    expect(g.isTakenElsewhere(on(context(), { takenUntil: 5 }))).toBe(true);
    expect(g.isTakenElsewhere(on(context()))).toBe(false);
    expect(g.isMovedOn(on(context(), { stored: {} }))).toBe(true);
    expect(g.isMovedOn(on(context()))).toBe(false);
    expect(g.isOffline(on(context({ online: false })))).toBe(true);
    expect(g.isOffline(on(context()))).toBe(false);
    for (const op of ['remove', 'dead-letter', 'revive'] as const) {
      const c = context({ commit: { op } as OutboxCommit });
      expect([g.wroteRemoval(on(c)), g.wroteDeadLetter(on(c)), g.wroteRevival(on(c))]).toEqual([
        op === 'remove',
        op === 'dead-letter',
        op === 'revive',
      ]);
    }
    const none = context();
    expect([g.wroteRemoval(on(none)), g.wroteDeadLetter(on(none)), g.wroteRevival(on(none))]).toEqual([
      false,
      false,
      false,
    ]);
  });
});

describe('the replies of the outbox’s children', () => {
  const input = { id: 'e1', attempt: 1 };
  it('a send’s result, a missing entry, a skipped send, or a rejection of unknown outcome', () => {
    expect(sendEntryReply(input, { ok: true, value: 'missing' })).toEqual({
      type: 'entry.missing',
      id: 'e1',
    });
    expect(sendEntryReply(input, { ok: true, value: 'skipped' })).toEqual({ type: 'send.skipped', id: 'e1' });
    expect(sendEntryReply(input, { ok: true, value: { result: 'sent' } })).toEqual({
      type: 'send.ended',
      id: 'e1',
      result: { result: 'sent' },
    });
    expect(sendEntryReply(input, { ok: false, error: new TypeError('row 7: secret') })).toEqual({
      type: 'send.ended',
      id: 'e1',
      result: {
        result: 'failed',
        failure: {
          class: 'unexpected',
          requestSent: 'unknown',
          origin: '',
          message: 'sendEntry threw TypeError instead of reporting a result',
        },
        attempts: 1,
        retryable: true,
      },
    });
  });

  it('a store write: succeeded (stale with the stored entry, taken with its time), missing, or failed by name only', () => {
    const write = { id: 'e1', commit: { op: 'remove', attempts: 1 } } as never;
    const stored = { id: 'e1', createdAt: 0, attempts: 2, nextAttemptAt: 0, status: 'pending' } as const;
    // toStrictEqual: no `stored` or `takenUntil` key, not even an undefined one.
    expect(commitEntryReply(write, { ok: true, value: { status: 'committed' } })).toStrictEqual({
      type: 'commit.succeeded',
      id: 'e1',
    });
    expect(commitEntryReply(write, { ok: true, value: { status: 'stale', stored } })).toEqual({
      type: 'commit.succeeded',
      id: 'e1',
      stored,
    });
    expect(commitEntryReply(write, { ok: true, value: { status: 'taken', until: 30_000 } })).toEqual({
      type: 'commit.succeeded',
      id: 'e1',
      takenUntil: 30_000,
    });
    expect(commitEntryReply(write, { ok: true, value: { status: 'missing' } })).toEqual({
      type: 'entry.missing',
      id: 'e1',
    });
    expect(commitEntryReply(write, { ok: false, error: new RangeError('row: secret') })).toEqual({
      type: 'commit.failed',
      id: 'e1',
      error: { name: 'RangeError' },
    });
  });

  it('replyOf never rejects, and stamps the event when given a clock', async () => {
    const signal = new AbortController().signal;
    const failing = () => Promise.reject(new SyntaxError('x'));
    expect(await replyOf(failing, sendEntryReply, input, signal, () => 42)).toMatchObject({
      type: 'send.ended',
      at: 42,
      result: { failure: { message: 'sendEntry threw SyntaxError instead of reporting a result' } },
    });
    expect(await replyOf(() => Promise.resolve('skipped' as const), sendEntryReply, input, signal)).toEqual({
      type: 'send.skipped',
      id: 'e1',
    });
  });
});

describe('the record the outbox machine may see of a stored entry (rule 9)', () => {
  it('its counters and times, and a copy of its last failure’s own fields only', () => {
    const last = { ...failure({ retryAfterMs: 3_000 }), body: 'secret' } as Failure;
    const record = entryRecordOf({
      id: 'e1',
      createdAt: 1,
      attempts: 2,
      nextAttemptAt: 3,
      status: 'pending',
      orderKey: 'k',
      deadReason: 'expired',
      failures: [failure({ status: 502 }), last],
    });
    expect(record).toEqual({
      id: 'e1',
      createdAt: 1,
      attempts: 2,
      nextAttemptAt: 3,
      status: 'pending',
      orderKey: 'k',
      deadReason: 'expired',
      failures: [failure({ retryAfterMs: 3_000 })],
    });
    // Absent fields stay absent, not undefined keys.
    const bare = entryRecordOf({
      id: 'e2',
      createdAt: 1,
      attempts: 0,
      nextAttemptAt: 1,
      status: 'pending',
      failures: [
        { class: 'connect', requestSent: 'no', origin: 'https://api.example.test', message: 'refused' },
      ],
    });
    expect(Object.keys(bare)).toEqual(['id', 'createdAt', 'attempts', 'nextAttemptAt', 'status', 'failures']);
    expect(Object.keys(bare.failures![0]!)).toEqual(['class', 'requestSent', 'origin', 'message']);
    expect(
      entryRecordOf({ id: 'e3', createdAt: 1, attempts: 0, nextAttemptAt: 1, status: 'pending' }),
    ).toEqual({
      id: 'e3',
      createdAt: 1,
      attempts: 0,
      nextAttemptAt: 1,
      status: 'pending',
    });
  });
});
