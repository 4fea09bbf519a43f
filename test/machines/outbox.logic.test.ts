import { describe, expect, it } from 'vitest';
import * as logic from '../../machines/outbox/outbox.logic.js';
import { nextWakeAt, planDispatch } from '../../machines/outbox/outbox.queue.js';
import type {
  OutboxCommit,
  OutboxDecision,
  OutboxEntryRecord,
  OutboxEntrySummary,
  OutboxMachineContext,
} from '../../machines/outbox/outbox.types.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { pendingSummary as summary } from '../helpers/outbox-summaries.js';
import type { Failure } from '../../src/policy/failure.js';

// The outbox machine's queue decisions, called as the machine calls them on queues written out here. Expected
// values come from the comments and docs/durable.md (what counts as pending and dead, what going online and
// flush bring forward, which answers are relayed), and rules 5 and 6, worked out by hand.

// Store writes that fail in a row are held off 1, 2, 4 ... s (the durable backoff); entries expire after 1 hour.
const policy = definePolicy({
  durable: { backoff: 'exponential', initialMs: 1_000, maxMs: 60_000, maxAttempts: 5, maxAgeMs: 3_600_000 },
});
const perKey = definePolicy({ durable: { order: 'per-key', concurrency: 3 } });

const record = (id: string, changes: Partial<OutboxEntryRecord> = {}): OutboxEntryRecord => ({
  id,
  createdAt: 0,
  attempts: 0,
  nextAttemptAt: 0,
  status: 'pending',
  ...changes,
});
const context = (changes: Partial<OutboxMachineContext> = {}): OutboxMachineContext => ({
  ...logic.initialContext({ policy, now: 10_000, online: true }),
  ...changes,
});
const on = (changes: Partial<OutboxMachineContext> = {}) => ({ context: context(changes) });
const refused: Failure = { class: 'connect', requestSent: 'no', origin: 'o', message: 'refused' };
const busy: Failure = {
  class: 'unavailable',
  requestSent: 'yes',
  origin: 'o',
  message: '503',
  status: 503,
  retryAfterMs: 5_000,
};

describe('what the outbox keeps of a stored entry', () => {
  it('a pending entry wakes online after a failure of the network path, and is held by a Retry-After', () => {
    expect(logic.summarize(record('a', { failures: [busy, refused] }))).toMatchObject({
      status: 'pending',
      wakesWhenOnline: true,
      heldByServer: false,
    });
    expect(logic.summarize(record('a', { failures: [refused, busy] }))).toMatchObject({
      wakesWhenOnline: false,
      heldByServer: true,
    });
    expect(logic.summarize(record('a'))).toMatchObject({ wakesWhenOnline: false, heldByServer: false });
    // The last of three, not the second.
    expect(logic.summarize(record('a', { failures: [refused, busy, refused] }))).toMatchObject({
      wakesWhenOnline: true,
      heldByServer: false,
    });
    // A dead entry waits for nothing.
    expect(logic.summarize(record('a', { status: 'dead', failures: [refused] }))).toMatchObject({
      status: 'dead',
      wakesWhenOnline: false,
      heldByServer: false,
    });
    expect(logic.summarize(record('a', { status: 'dead', failures: [busy] }))).toMatchObject({
      heldByServer: false,
    });
  });
});

describe('the outbox’s queue', () => {
  it('recordTime: time never goes back', () => {
    expect(logic.recordTime(on(), { at: 12_000 })).toEqual({ now: 12_000 });
    expect(logic.recordTime(on(), { at: 9_000 })).toEqual({ now: 10_000 });
    expect(logic.recordTime(on(), { at: undefined })).toEqual({ now: 10_000 });
  });

  it('recordEnqueued adds a new entry and tells the counts; a known id changes nothing', () => {
    const dead = summary('d', { status: 'dead' });
    const step = logic.recordEnqueued(on({ entries: [dead] }), {
      type: 'outbox.enqueued',
      entry: record('n'),
      at: 10_500,
    });
    expect(step.changes).toMatchObject({ now: 10_500 });
    expect(step.changes.entries!.map((e) => e.id)).toEqual(['d', 'n']);
    expect(step.emit).toEqual([{ type: 'outbox-changed', size: 2, pending: 1, dead: 1, at: 10_500 }]);
    expect(
      logic.recordEnqueued(on({ entries: [dead] }), {
        type: 'outbox.enqueued',
        entry: record('d'),
        at: 10_600,
      }),
    ).toEqual({ changes: { now: 10_600 } });
  });

  it('recordRescanned: new entries join in the store’s order, known ones keep the runner’s record', () => {
    const mine = summary('a', { status: 'sending', attempts: 2 });
    const step = logic.recordRescanned(on({ entries: [mine] }), {
      entries: [record('b'), record('a'), record('b', { attempts: 9 })],
      at: 10_700,
    });
    expect(step.changes.entries).toEqual([logic.summarize(record('b')), mine]);
    expect(step.emit).toEqual([{ type: 'outbox-changed', size: 2, pending: 2, dead: 0, at: 10_700 }]);
    // The same entries again: nothing to tell.
    expect(logic.recordRescanned(on({ entries: [mine] }), { entries: [record('a')], at: 10_800 })).toEqual({
      changes: { now: 10_800 },
      emit: [],
    });
  });

  it('recordLoaded: the store’s entries in its order, then those enqueued meanwhile, and the counts', () => {
    const step = logic.recordLoaded(on({ entries: [summary('new'), summary('a')] }), {
      entries: [record('a'), record('d', { status: 'dead' }), record('a')],
      at: 10_100,
    });
    expect(step.changes.entries!.map((e) => e.id)).toEqual(['a', 'd', 'new']);
    expect(step.emit).toEqual([{ type: 'outbox-changed', size: 3, pending: 2, dead: 1, at: 10_100 }]);
  });

  it('recordRescanned: an entry added while another is forgotten is told', () => {
    const step = logic.recordRescanned(on({ entries: [summary('a'), summary('x')] }), {
      entries: [record('a'), record('b')],
      complete: true,
    });
    expect(step.changes.entries!.map((e) => e.id)).toEqual(['a', 'b']);
    expect(step.emit).toEqual([{ type: 'outbox-changed', size: 2, pending: 2, dead: 0, at: 10_000 }]);
  });

  it('recordRescanned: a complete read forgets what the store lost, unless in flight or written meanwhile', () => {
    const entries = [
      summary('gone'),
      summary('flying', { status: 'claiming' }),
      summary('kept'),
      summary('stays'),
    ];
    const step = logic.recordRescanned(on({ entries }), {
      entries: [record('stays')],
      complete: true,
      keep: ['kept'],
    });
    expect(step.changes.entries!.map((e) => e.id)).toEqual(['stays', 'flying', 'kept']);
    expect(step.emit).toEqual([{ type: 'outbox-changed', size: 3, pending: 3, dead: 0, at: 10_000 }]);
    // A read that is not complete forgets nothing.
    const partial = logic.recordRescanned(on({ entries }), { entries: [record('stays')] });
    expect(partial).toEqual({ changes: { now: 10_000 }, emit: [] });
  });

  it('recordConnectivity: going online makes due what failed on the network path; claims hear it (rule 6)', () => {
    const entries = [
      summary('w', { nextAttemptAt: 50_000, wakesWhenOnline: true }),
      summary('past', { nextAttemptAt: 5_000, wakesWhenOnline: true }),
      summary('s', { nextAttemptAt: 50_000 }),
      summary('c', { status: 'claiming', nextAttemptAt: 50_000, wakesWhenOnline: true }),
    ];
    const online = logic.recordConnectivity(on({ entries, online: false }), {
      type: 'connectivity.changed',
      online: true,
      at: 10_100,
    });
    expect(online.changes).toEqual({
      now: 10_100,
      online: true,
      entries: [
        summary('w', { nextAttemptAt: 10_100, wakesWhenOnline: false }),
        summary('past', { nextAttemptAt: 5_000, wakesWhenOnline: false }),
        entries[2],
        entries[3],
      ],
    });
    expect(online.send).toEqual([
      { to: 'entry:c', event: { type: 'connectivity.changed', online: true, at: 10_100 } },
    ]);
    // Going offline, or online when online already, moves no entry.
    expect(
      logic.recordConnectivity(on({ entries }), { type: 'connectivity.changed', online: false, at: 10_200 })
        .changes,
    ).toEqual({ now: 10_200, online: false });
    expect(
      logic.recordConnectivity(on({ entries }), { type: 'connectivity.changed', online: true }).changes,
    ).toEqual({ now: 10_000, online: true });
  });

  it('recordFlush: every pending entry is due now, except one a server asked to wait (rule 5)', () => {
    const entries = [
      summary('p', { nextAttemptAt: 50_000 }),
      summary('early', { nextAttemptAt: 3_000 }),
      summary('held', { nextAttemptAt: 50_000, heldByServer: true }),
      summary('d', { status: 'dead', nextAttemptAt: 50_000 }),
    ];
    expect(logic.recordFlush(on({ entries }), { type: 'outbox.flush', at: 10_300 })).toEqual({
      now: 10_300,
      entries: [summary('p', { nextAttemptAt: 10_300 }), entries[1], entries[2], entries[3]],
    });
  });

  it('nextWakeAt: the earliest future time, strictly after now', () => {
    const c = context({
      entries: [summary('a', { nextAttemptAt: 10_000 }), summary('b', { nextAttemptAt: 20_000 })],
    });
    expect(nextWakeAt(c)).toBe(20_000);
    expect(
      nextWakeAt(
        context({
          entries: [summary('a', { nextAttemptAt: 20_000 }), summary('b', { nextAttemptAt: 20_000 })],
        }),
      ),
    ).toBe(20_000);
  });

  it('planDispatch per key: one group per orderKey, an entry without one waits for nobody', () => {
    const c = context({
      policy: perKey,
      entries: [
        summary('k1', { orderKey: 'k', nextAttemptAt: 99_000 }),
        summary('k2', { orderKey: 'k' }),
        summary('free1'),
        summary('free2'),
      ],
    });
    expect(planDispatch(c).map((p) => p.id)).toEqual(['free1', 'free2']);
  });

  it('planDispatch: an attempt counted but not made is sent, and not counted as one used', () => {
    const c = context({ entries: [summary('a', { attempts: 5, counted: true })] });
    expect(planDispatch(c)).toEqual([{ id: 'a', send: { id: 'a', attempt: 5 } }]);
    expect(logic.dispatchDue({ context: c }).changes.entries).toEqual([
      summary('a', { attempts: 5, status: 'sending', counted: false }),
    ]);
    // Five made of five: dead-lettered, never sent.
    expect(planDispatch(context({ entries: [summary('a', { attempts: 5 })] }))).toEqual([
      { id: 'a', commit: { op: 'dead-letter', attempts: 5, reason: 'attempts-exhausted' } },
    ]);
  });

  it('planDispatch: an entry expires at exactly maxAgeMs, and is dead-lettered offline or with every slot taken', () => {
    // Created at 0, maxAgeMs 3,600,000: at 3,600,000 its age is the limit itself, which deadBeforeSend counts.
    const expired = [{ id: 'a', commit: { op: 'dead-letter', attempts: 0, reason: 'expired' } }];
    const now = 3_600_000;
    expect(planDispatch(context({ now, online: false, entries: [summary('a')] }))).toEqual(expired);
    // Concurrency 1, taken by b's send: no slot to claim with, yet a's dead-lettering sends nothing.
    const sending = summary('b', { createdAt: now, status: 'sending', attempts: 1 });
    expect(planDispatch(context({ now, entries: [summary('a'), sending] }))).toEqual(expired);
    // One millisecond younger, offline: nothing to start.
    expect(planDispatch(context({ now: now - 1, online: false, entries: [summary('a')] }))).toEqual([]);
  });

  it('forgetDecisions: a kept decision is dropped; entries without one are kept as they are, and no decision changes nothing', () => {
    const remove: OutboxDecision = { op: 'remove', attempts: 1 };
    const plain = summary('p');
    const inFlight = summary('s', { status: 'sending', attempts: 1 });
    const decided = summary('d', { attempts: 1, heldUntil: 12_000, decided: remove });
    const forgotten = logic.forgetDecisions(on({ entries: [plain, decided, inFlight] })).entries!;
    expect(forgotten).toStrictEqual([plain, { ...decided, decided: undefined }, inFlight]);
    expect(forgotten[0]).toBe(plain);
    expect(forgotten[2]).toBe(inFlight);
    expect(logic.forgetDecisions(on({ entries: [plain, inFlight] }))).toStrictEqual({});
  });

  it('dispatchDue: a claim is `claiming`, a dead-lettering `committing`', () => {
    const c = context({ entries: [summary('a'), summary('x', { attempts: 5 })] });
    const step = logic.dispatchDue({ context: c });
    expect(step.changes.entries).toEqual([
      summary('a', { status: 'claiming', commit: { op: 'claim', attempts: 1 } }),
      summary('x', {
        attempts: 5,
        status: 'committing',
        commit: { op: 'dead-letter', attempts: 5, reason: 'attempts-exhausted' },
      }),
    ]);
    expect(step.start!.map((s) => s.id)).toEqual(['entry:a', 'entry:x']);
  });

  it('relayToEntry: an answer for an entry in flight goes to its machine; its send or write stops', () => {
    const c = context({ entries: [summary('a', { status: 'sending' }), summary('p')] });
    const ended = { type: 'send.ended', id: 'a', result: { result: 'sent' }, at: 10_400 } as const;
    expect(logic.relayToEntry({ context: c }, ended)).toEqual({
      changes: { now: 10_400 },
      stop: ['send:a'],
      send: [{ to: 'entry:a', event: ended }],
    });
    const written = { type: 'commit.succeeded', id: 'p' } as const;
    expect(logic.relayToEntry({ context: c }, written)).toEqual({
      changes: { now: 10_000 },
      stop: ['commit:p'],
    });
    expect(logic.relayToEntry({ context: c }, { ...written, id: 'nobody' })).toEqual({
      changes: { now: 10_000 },
      stop: ['commit:nobody'],
    });
  });

  it('recordProgress: the queue takes the entry’s copy and starts the write or send it waits for', () => {
    const c = context({ entries: [summary('c', { status: 'claiming' }), summary('p')], storeFailures: 2 });
    const sending = summary('c', { status: 'sending', attempts: 1 });
    expect(
      logic.recordProgress(
        { context: c },
        { type: 'entry.progressed', id: 'c', entry: sending, wrote: true, at: 10_100 },
      ),
    ).toEqual({
      changes: { now: 10_100, storeFailures: 0, entries: [sending, summary('p')] },
      start: [{ src: 'sendEntry', id: 'send:c', input: { id: 'c', attempt: 1 } }],
    });
    const commit: OutboxCommit = { op: 'remove', attempts: 1 };
    const committing = summary('c', { status: 'committing', attempts: 1, commit });
    expect(
      logic.recordProgress(
        { context: c },
        { type: 'entry.progressed', id: 'c', entry: committing, wrote: false, at: 9_000 },
      ),
    ).toEqual({
      changes: { now: 10_000, storeFailures: 2, entries: [committing, summary('p')] },
      start: [{ src: 'commitEntry', id: 'commit:c', input: { id: 'c', commit } }],
    });
  });

  it('recordSettled: an entry that is not in flight is left as it is', () => {
    const c = context({ entries: [summary('p')] });
    expect(
      logic.recordSettled(
        { context: c },
        {
          type: 'entry.settled',
          id: 'p',
          outcome: 'missing',
          entry: summary('p'),
          wrote: false,
          at: 10_100,
        },
      ),
    ).toEqual({ changes: { now: 10_100 }, stop: ['entry:p', 'commit:p', 'send:p'] });
  });

  it('recordProgress: only for an entry in flight', () => {
    const c = context({ entries: [summary('p')], storeFailures: 2 });
    expect(
      logic.recordProgress(
        { context: c },
        {
          type: 'entry.progressed',
          id: 'p',
          entry: summary('p', { status: 'sending' }),
          wrote: true,
          at: 10_100,
        },
      ),
    ).toEqual({ changes: { now: 10_100 } });
  });
});

describe('an entry’s lifecycle settled', () => {
  const commits = {
    remove: { op: 'remove', attempts: 2 },
    reschedule: { op: 'reschedule', attempts: 2, nextAttemptAt: 20_000, delayMs: 2_000, failure: busy },
    deadLetter: { op: 'dead-letter', attempts: 5, reason: 'attempts-exhausted' },
    revive: { op: 'revive', createdAt: 10_000, nextAttemptAt: 10_000 },
  } satisfies Record<string, OutboxCommit>;
  const settle = (
    outcome: 'sent' | 'rescheduled' | 'deadLettered' | 'revived' | 'released' | 'writeFailed' | 'missing',
    commit: OutboxCommit | undefined,
    entry: OutboxEntrySummary,
    changes: Partial<OutboxMachineContext> = {},
    wrote = true,
  ) =>
    logic.recordSettled(
      on({
        entries: [summary('a', { status: 'committing', commit }), summary('d', { status: 'dead' })],
        storeFailures: 1,
        ...changes,
      }),
      { type: 'entry.settled', id: 'a', outcome, entry, commit, wrote, at: 10_500 },
    );
  const stop = ['entry:a', 'commit:a', 'send:a'];

  it('rescheduled: back in the queue, announced with its wait and failure', () => {
    const back = summary('a', { attempts: 2, nextAttemptAt: 20_000 });
    expect(settle('rescheduled', commits.reschedule, back)).toEqual({
      changes: { now: 10_500, storeFailures: 0, entries: [back, summary('d', { status: 'dead' })] },
      stop,
      emit: [
        {
          type: 'entry-retry-scheduled',
          id: 'a',
          attempts: 2,
          delayMs: 2_000,
          failureClass: 'unavailable',
          at: 10_500,
        },
      ],
    });
  });

  it('revived: pending again, announced with the counts', () => {
    const back = summary('a');
    expect(settle('revived', commits.revive, back).emit).toEqual([
      { type: 'entry-revived', id: 'a', at: 10_500 },
      { type: 'outbox-changed', size: 2, pending: 1, dead: 1, at: 10_500 },
    ]);
  });

  it('a failed write holds the entry off by the durable backoff for the failures in a row; a dead one stays dead', () => {
    // The second failure in a row: held off 2 s.
    const step = settle('writeFailed', commits.remove, summary('a'), {}, false);
    expect(step.changes).toEqual({
      now: 10_500,
      storeFailures: 2,
      entries: [summary('a', { heldUntil: 12_500 }), summary('d', { status: 'dead' })],
    });
    expect(step.emit).toEqual([{ type: 'outbox-store-failed', id: 'a', op: 'remove', at: 10_500 }]);
    const dead = summary('a', { status: 'dead' });
    expect(settle('writeFailed', commits.revive, dead, {}, false).changes.entries![0]).toEqual(dead);
  });

  it('missing: forgotten, and the counts told', () => {
    expect(settle('missing', undefined, summary('a'), {}, false)).toEqual({
      changes: { now: 10_500, storeFailures: 1, entries: [summary('d', { status: 'dead' })] },
      stop,
      emit: [{ type: 'outbox-changed', size: 1, pending: 0, dead: 1, at: 10_500 }],
    });
  });
});

describe('outbox.retry and a missing entry', () => {
  it('requestRevive: only a dead entry is revived, dated now', () => {
    const c = context({ entries: [summary('p'), summary('d', { status: 'dead', attempts: 5 })] });
    const step = logic.requestRevive({ context: c }, { type: 'outbox.retry', id: 'd', at: 10_600 });
    const commit: OutboxCommit = { op: 'revive', createdAt: 10_600, nextAttemptAt: 10_600 };
    expect(step.changes).toEqual({
      now: 10_600,
      entries: [summary('p'), summary('d', { status: 'committing', attempts: 5, commit })],
    });
    expect(step.start).toEqual([
      {
        src: 'outboxEntry',
        id: 'entry:d',
        input: {
          policy,
          now: 10_600,
          online: true,
          entry: summary('d', { status: 'dead', attempts: 5 }),
          work: { commit },
        },
      },
    ]);
    expect(logic.requestRevive({ context: c }, { type: 'outbox.retry', id: 'p', at: 10_600 })).toEqual({
      changes: { now: 10_600 },
    });
    expect(logic.requestRevive({ context: c }, { type: 'outbox.retry', id: 'none' })).toEqual({
      changes: { now: 10_000 },
    });
  });

  it('recordMissing: an entry in flight hears it; any other is forgotten at once', () => {
    const c = context({ entries: [summary('s', { status: 'sending' }), summary('p')] });
    expect(logic.recordMissing({ context: c }, { type: 'entry.missing', id: 's', at: 10_700 })).toEqual({
      changes: { now: 10_700 },
      stop: ['commit:s', 'send:s'],
      send: [{ to: 'entry:s', event: { type: 'entry.missing', id: 's', at: 10_700 } }],
    });
    expect(logic.recordMissing({ context: c }, { type: 'entry.missing', id: 'p' })).toEqual({
      changes: { now: 10_000, entries: [summary('s', { status: 'sending' })] },
      stop: ['commit:p', 'send:p'],
      emit: [{ type: 'outbox-changed', size: 1, pending: 1, dead: 0, at: 10_000 }],
    });
    expect(logic.recordMissing({ context: c }, { type: 'entry.missing', id: 'none' })).toEqual({
      changes: { now: 10_000 },
      stop: ['commit:none', 'send:none'],
    });
  });
});

describe('the outbox’s waits', () => {
  it('nextDue: until the time set when the timer was armed, never negative', () => {
    expect(logic.outboxLogic.delays.nextDue(on({ wakeAt: 12_500 }))).toBe(2_500);
    expect(logic.outboxLogic.delays.nextDue(on({ wakeAt: 9_000 }))).toBe(0);
  });
});
