import { describe, expect, it } from 'vitest';
import {
  clearWrote,
  decideOutcome,
  initialEntryContext,
  recordClaimed,
  recordClaimedOffline,
  recordConnectivity,
  recordMissing,
  recordWriteFailed,
  recordWritten,
} from '../../machines/outbox-entry/outbox-entry.actions.js';
import type { OutboxEntryMachineContext } from '../../machines/outbox-entry/outbox-entry.types.js';
import type { OutboxCommit, OutboxEntrySummary, SendResult } from '../../machines/outbox/outbox.types.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import type { Failure } from '../../src/policy/failure.js';

// An entry's lifecycle steps, each on a hand-written context. Expected values come from the actions' comments and
// docs/durable.md (default durable policy: exponential backoff from 10 s, 10 attempts, 7 days), worked out by hand.

const policy = definePolicy({});
const NOW = 1_000;

const entry = (overrides: Partial<OutboxEntrySummary> = {}): OutboxEntrySummary => ({
  id: 'e1',
  createdAt: 0,
  attempts: 2,
  nextAttemptAt: 0,
  status: 'committing',
  wakesWhenOnline: false,
  heldByServer: false,
  ...overrides,
});

const context = (
  overrides: Partial<OutboxEntryMachineContext> = {},
  entryOverrides: Partial<OutboxEntrySummary> = {},
): OutboxEntryMachineContext => ({
  policy,
  now: NOW,
  online: true,
  wrote: false,
  entry: entry(entryOverrides),
  ...overrides,
});

const unavailable: Failure = {
  class: 'unavailable',
  requestSent: 'yes',
  origin: 'o',
  status: 503,
  message: '503',
};
const offline: Failure = { class: 'offline', requestSent: 'no', origin: 'o', message: 'offline' };
const failed = (extra: Partial<Extract<SendResult, { result: 'failed' }>> = {}): SendResult => ({
  result: 'failed',
  failure: unavailable,
  attempts: 1,
  retryable: true,
  ...extra,
});

describe('initialEntryContext', () => {
  const base = { policy, now: NOW, online: false, entry: entry({ status: 'pending' }) };

  it('starts a send of an attempt already counted: sending, nothing counted left, nothing written yet', () => {
    const c = initialEntryContext({
      ...base,
      entry: entry({ status: 'pending', counted: true }),
      work: { send: { id: 'e1', attempt: 2 } },
    });
    expect(c).toEqual({
      policy,
      now: NOW,
      online: false,
      wrote: false,
      entry: entry({ status: 'sending', counted: false }),
    });
  });

  it('starts a claim as claiming, and a decision kept after a failed write as committing, no longer kept', () => {
    const claim: OutboxCommit = { op: 'claim', attempts: 3 };
    expect(initialEntryContext({ ...base, work: { commit: claim } })).toMatchObject({
      wrote: false,
      commit: claim,
      entry: { status: 'claiming', commit: claim },
    });
    const removal: OutboxCommit = { op: 'remove', attempts: 2 };
    const c = initialEntryContext({
      ...base,
      entry: entry({ status: 'pending', decided: removal }),
      work: { commit: removal },
    });
    expect(c.entry).toMatchObject({ status: 'committing', commit: removal });
    expect(c.entry.decided).toBeUndefined();
  });
});

describe('time never goes back', () => {
  it.each([
    [undefined, NOW],
    [NOW - 1, NOW],
    [NOW, NOW],
    [NOW + 1, NOW + 1],
  ])('an event stamped %s leaves the machine at %s', (at, now) => {
    expect(recordMissing({ context: context(), event: { type: 'entry.missing', id: 'e1', at } })).toEqual({
      now,
    });
  });
});

describe('claims', () => {
  const claiming = context(
    { commit: { op: 'claim', attempts: 3 } },
    { status: 'claiming', counted: true, heldUntil: 5, taken: true },
  );

  it('a counted attempt is sent: sending, with the attempts the claim wrote, a write done', () => {
    expect(
      recordClaimed({ context: claiming, event: { type: 'commit.succeeded', id: 'e1', at: NOW + 5 } }),
    ).toEqual({
      now: NOW + 5,
      wrote: true,
      entry: entry({
        status: 'sending',
        attempts: 3,
        counted: false,
        commit: undefined,
        heldUntil: undefined,
        taken: undefined,
      }),
    });
  });

  it('offline since the claim began: pending, its counted attempt kept for the next send', () => {
    expect(
      recordClaimedOffline({ context: claiming, event: { type: 'commit.succeeded', id: 'e1' } }),
    ).toEqual({
      now: NOW,
      wrote: true,
      entry: entry({
        status: 'pending',
        attempts: 3,
        counted: true,
        commit: undefined,
        heldUntil: undefined,
        taken: undefined,
      }),
    });
  });
});

describe('decideOutcome', () => {
  const sending = context({}, { status: 'sending', attempts: 2 });
  const decide = (result: SendResult, at?: number) =>
    decideOutcome({ context: sending, event: { type: 'send.ended', id: 'e1', result, at } });

  it('a sent entry is removed, with the attempts it made', () => {
    expect(decide({ result: 'sent' }, NOW + 3)).toEqual({
      now: NOW + 3,
      commit: { op: 'remove', attempts: 2 },
      entry: entry({ status: 'committing', attempts: 2, commit: { op: 'remove', attempts: 2 } }),
    });
  });

  it('a failed send is rescheduled after the backoff of every attempt it made (rule 1)', () => {
    // The claim counted 2; the send made 3 attempts: 4 in all; the wait is 10 s * 2^(4 - 1) = 80 s.
    const { commit } = decide(failed({ attempts: 3, failures: [unavailable] }));
    expect(commit).toEqual({
      op: 'reschedule',
      attempts: 4,
      nextAttemptAt: NOW + 80_000,
      delayMs: 80_000,
      failure: unavailable,
      failures: [unavailable],
      wakesWhenOnline: undefined,
    });
  });

  it.each([0, Number.NaN, 0.5])('a send that reports %s attempts counts as one', (attempts) => {
    // 2 attempts: 10 s * 2^(2 - 1) = 20 s.
    expect(decide(failed({ attempts })).commit).toMatchObject({
      op: 'reschedule',
      attempts: 2,
      delayMs: 20_000,
    });
  });

  it("honours the send's Retry-After, or else its failure's", () => {
    expect(decide(failed({ retryAfterMs: 300_000 })).commit).toMatchObject({ delayMs: 300_000 });
    expect(decide(failed({ failure: { ...unavailable, retryAfterMs: 200_000 } })).commit).toMatchObject({
      delayMs: 200_000,
    });
  });

  it('dead-letters what another attempt cannot mend, and the last attempt', () => {
    expect(decide(failed({ retryable: false })).commit).toEqual({
      op: 'dead-letter',
      attempts: 2,
      reason: 'not-retryable',
      failure: unavailable,
      failures: undefined,
    });
    // 2 counted + 8 more made = 10, the default maxAttempts.
    expect(decide(failed({ attempts: 9 })).commit).toMatchObject({
      op: 'dead-letter',
      attempts: 10,
      reason: 'attempts-exhausted',
    });
  });
});

describe('recordWritten', () => {
  const written = (commit: OutboxCommit, entryOverrides: Partial<OutboxEntrySummary> = {}) =>
    recordWritten({
      context: context({ commit }, entryOverrides),
      event: { type: 'commit.succeeded', id: 'e1' },
    });
  const reschedule = (failure: Failure, wakes?: boolean): OutboxCommit => ({
    op: 'reschedule',
    attempts: 3,
    nextAttemptAt: 50_000,
    delayMs: 49_000,
    failure,
    wakesWhenOnline: wakes,
  });

  it('a reschedule: pending at its time; a wait earned on the network path ends when the device is online', () => {
    expect(written(reschedule(unavailable)).entry).toMatchObject({
      status: 'pending',
      attempts: 3,
      nextAttemptAt: 50_000,
      wakesWhenOnline: false,
      heldByServer: false,
    });
    expect(written(reschedule(offline)).entry).toMatchObject({ wakesWhenOnline: true, heldByServer: false });
    // The send ended offline (the request machine says so) though its last failure came from a server.
    expect(written(reschedule(unavailable, true)).entry).toMatchObject({ wakesWhenOnline: true });
  });

  it("a reschedule after a server's Retry-After is held by the server (flush() does not hurry it, rule 5)", () => {
    expect(written(reschedule({ ...unavailable, retryAfterMs: 30_000 })).entry).toMatchObject({
      heldByServer: true,
      wakesWhenOnline: false,
    });
  });

  it('a revival: pending from scratch, its age and waits reset', () => {
    const revived = written(
      { op: 'revive', createdAt: 7_000, nextAttemptAt: 7_000 },
      {
        status: 'committing',
        attempts: 10,
        wakesWhenOnline: true,
        heldByServer: true,
        deadReason: 'expired',
      },
    );
    expect(revived).toEqual({
      now: NOW,
      wrote: true,
      entry: entry({
        status: 'pending',
        attempts: 0,
        createdAt: 7_000,
        nextAttemptAt: 7_000,
        wakesWhenOnline: false,
        heldByServer: false,
        deadReason: undefined,
        counted: false,
        commit: undefined,
        heldUntil: undefined,
        taken: undefined,
      }),
    });
  });

  it('a removal: the entry as it was, nothing in flight, a write done', () => {
    expect(written({ op: 'remove', attempts: 2 }, { commit: { op: 'remove', attempts: 2 } })).toEqual({
      now: NOW,
      wrote: true,
      entry: entry({ counted: false, commit: undefined, heldUntil: undefined, taken: undefined }),
    });
  });
});

describe('recordWriteFailed', () => {
  const failedWrite = (commit: OutboxCommit | undefined) =>
    recordWriteFailed({
      context: context({ commit }, { commit, taken: true }),
      event: { type: 'commit.failed', id: 'e1', error: { name: 'Error' } },
    }).entry!;

  it('a failed revival leaves the entry dead; a failed claim leaves it pending, with nothing kept', () => {
    expect(failedWrite({ op: 'revive', createdAt: 0, nextAttemptAt: 0 })).toMatchObject({
      status: 'dead',
      decided: undefined,
    });
    expect(failedWrite({ op: 'claim', attempts: 3 })).toMatchObject({
      status: 'pending',
      decided: undefined,
      commit: undefined,
      taken: undefined,
    });
  });

  it('a failed decision is kept, to be written again', () => {
    const removal: OutboxCommit = { op: 'remove', attempts: 2 };
    expect(failedWrite(removal)).toMatchObject({ status: 'pending', decided: removal });
  });

  it('with no write on record, the entry is pending', () => {
    expect(failedWrite(undefined)).toMatchObject({ status: 'pending', decided: undefined });
  });
});

describe('the rest', () => {
  it('connectivity heard while claiming is kept, with the time', () => {
    expect(
      recordConnectivity({
        context: context(),
        event: { type: 'connectivity.changed', online: false, at: NOW + 9 },
      }),
    ).toEqual({ now: NOW + 9, online: false });
  });

  it('clearWrote: a report has told the outbox of the write', () => {
    expect(clearWrote()).toEqual({ wrote: false });
  });
});
