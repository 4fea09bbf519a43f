import type { CommitOutcome } from '../../machines/outbox/outbox.actors.js';
import { entryRecordOf } from '../../machines/outbox/entry-record.js';
import { StateError } from '../errors/state-error.js';
import { commitEntryReply, replyOf, sendEntryReply } from '../../machines/outbox/outbox.replies.js';
import { hasWorkInFlight } from '../../machines/outbox/outbox.actions.js';
import { isInFlight } from '../../machines/outbox/queue-facts.js';
import { outboxLogic } from '../../machines/outbox/outbox.logic.js';
import { outboxTable } from '../../machines/outbox/outbox.table.js';
import { outboxEntryLogic } from '../../machines/outbox-entry/outbox-entry.logic.js';
import { outboxEntryTable } from '../../machines/outbox-entry/outbox-entry.table.js';
import type {
  AcquireLeaseInput,
  CommitEntryInput,
  OutboxCommit,
  OutboxEntryRecord,
  OutboxMachineContext,
  OutboxMachineEmitted,
  SendEntryInput,
  SendResult,
} from '../../machines/outbox/outbox.types.js';
import type { Clock } from '../clock/clock.js';
import { isConnectivityHint, type ConnectivitySource } from '../connectivity/connectivity-source.js';
import { errorNameOf } from '../policy/error-name.js';
import type { Policy } from '../policy/policy.js';
import type { OutboxClaims, OutboxEntry, OutboxStore } from '../stores/outbox-store.js';
import type { MachineRun, MachineRunner } from '../engine/machine-runner.js';
import { leanRunner } from '../engine/machine-runner.js';
import { childMachine } from '../engine/child-machine.js';
import { matchesValue } from '../engine/lean-actor.js';
import { spreadUnkeyed } from './claim-spread.js';
import { answeredWithin, STORE_ANSWER_MS, STORE_WAIT_MS, settledWithin } from './bounded-wait.js';
import { flushResultOf, type FlushFacts, type FlushResult } from './flush-result.js';

/**
 * How long this runner's lease on the store lasts: 30 s. It is renewed every 10 s while the runner sends, and
 * given back as soon as nothing is in flight or due; a runner that stops without giving it back (a crash, a
 * closed tab) holds it at most this long. Another runner asks again every 15 s.
 */
export const OUTBOX_LEASE_TTL_MS = 30_000;

/**
 * While `flush()` waits for a lease another live runner holds (up to `policy.durable.flushWaitMs`), it asks
 * again this often: the holder gives it back as soon as it is idle, and a dead holder's lease is free at once.
 */
export const FLUSH_LEASE_POLL_MS = 100;

/**
 * With a store that claims single entries (`OutboxStore.claims`), an entry another runner holds is asked about
 * again after at most this long: the store cannot tell when a claim ends early (the holder finished it, or its
 * session ended), and asking costs one small transaction.
 */
export const CLAIM_RECHECK_MS = 1_000;

/** ...and after at least this long, so that a row being written right now is not asked about in a busy loop. */
export const CLAIM_RECHECK_MIN_MS = 100;

/**
 * With a store that claims single entries, the runner reads the store this often while idle, so that entries
 * other processes wrote (or left behind when they died) join its queue: every runner sends, none waits for a
 * lease that would make it read the store.
 */
export const CLAIM_POLL_MS = 1_000;

/** A stored entry keeps its last this many failures (`OutboxEntry.failures`). */
export const MAX_STORED_FAILURES = 20;

export interface OutboxRunnerOptions {
  /** Where the entries are kept: the source of truth. The runner never closes it (its owner does). */
  store: OutboxStore;
  clock: Clock;
  policy: Policy;
  /** Without one, the runner counts as always online. */
  connectivity?: ConnectivitySource | undefined;
  /**
   * Sends a stored entry once (one run of the request lifecycle) and says how it went. `entry.attempts`
   * already counts this send's first attempt. Should never reject; a rejection counts as a failed attempt whose
   * outcome is unknown. `signal` aborts when the runner closes.
   */
  send(entry: OutboxEntry, signal: AbortSignal): Promise<SendResult>;
  /** The outbox machine's emitted events, for the decision log (ids, counts and reasons only). */
  onEmitted?: ((event: OutboxMachineEmitted) => void) | undefined;
  /** What runs the outbox machine. @default the lean executor */
  runner?: MachineRunner | undefined;
  /** This runner's name on the lease. @default a random UUID */
  owner?: string | undefined;
}

export interface OutboxRunner {
  /**
   * Writes the entry to the store, then hands it to the scheduler. Rejects (and schedules nothing) when the write
   * fails. When `abandoned` has aborted by the time the write lands (its request ended without it), the entry is
   * removed again instead: nothing is sent for it.
   */
  enqueue(entry: OutboxEntry, abandoned?: AbortSignal): Promise<void>;
  /** Entries in the store, dead ones included. */
  size(): Promise<number>;
  /** Every stored entry, dead ones included, in the order they were added. */
  list(): Promise<OutboxEntry[]>;
  /**
   * Makes every pending entry due now (backoff ignored; connectivity, order, concurrency and the lease not) and
   * resolves when the sends it started have ended and their outcomes are written: nothing is in flight and
   * nothing more can start now. While another live runner holds the lease it asks again every
   * `FLUSH_LEASE_POLL_MS`, up to `policy.durable.flushWaitMs`. Resolves with what it sent, what it
   * dead-lettered, what is still pending and why.
   */
  flush(): Promise<FlushResult>;
  /**
   * Resolves `true` once this runner has begun sending the entry (counting its attempt, sending, or writing the
   * outcome), `false` when it is not going to start now: it waits for its turn, for connectivity or for the
   * lease another runner holds, or the runner stopped. `client.request` uses it to tell "sent at once" from
   * "deferred".
   */
  started(id: string): Promise<boolean>;
  /**
   * Resolves once the send of the entry in flight has ended and its outcome is written (or the runner stopped),
   * with the entry's status then: `dead` once dead-lettered, `pending` when it waits for another send (or the
   * runner stopped), `undefined` when the runner no longer has it.
   */
  settled(id: string): Promise<'pending' | 'dead' | undefined>;
  /**
   * Puts a dead entry back in the queue with its attempts reset and its age counted from now. Resolves `true`
   * once that is written, `false` when the id is not a dead entry or the write failed.
   */
  retry(id: string): Promise<boolean>;
  /**
   * Removes an entry from the store, pending or dead, and from the scheduler (a send in flight for it is
   * aborted). Resolves `true` when the store had it.
   */
  remove(id: string): Promise<boolean>;
  /**
   * Stops the scheduler (aborting sends in flight; their entries stay in the store, attempts counted), stops
   * listening to connectivity, waits for store writes already started, and gives the lease back; each wait on
   * the store at most `STORE_WAIT_MS`. No timer is left. The store stays open. Closing twice is harmless.
   */
  close(): Promise<void>;
}

/** The stored entry after `commit`, or `undefined` when the commit removes it. */
export function applyCommit(entry: OutboxEntry, commit: OutboxCommit): OutboxEntry | undefined {
  const failures = (failure: OutboxEntry['failures'][number] | undefined) => {
    const added =
      'failures' in commit && commit.failures?.length ? commit.failures : failure ? [failure] : [];
    return added.length ? [...entry.failures, ...added].slice(-MAX_STORED_FAILURES) : entry.failures;
  };
  switch (commit.op) {
    case 'remove':
      return undefined;
    case 'claim':
      return { ...entry, attempts: commit.attempts };
    case 'reschedule':
      return {
        ...entry,
        status: 'pending',
        attempts: commit.attempts,
        nextAttemptAt: commit.nextAttemptAt,
        failures: failures(commit.failure),
      };
    case 'dead-letter':
      return {
        ...entry,
        status: 'dead',
        attempts: commit.attempts,
        deadReason: commit.reason,
        failures: failures(commit.failure),
      };
    case 'revive': {
      const { deadReason: _, ...rest } = entry;
      return {
        ...rest,
        status: 'pending',
        attempts: 0,
        createdAt: commit.createdAt,
        nextAttemptAt: commit.nextAttemptAt,
      };
    }
  }
}

type OutboxRun = Pick<MachineRun<OutboxMachineContext>, 'status' | 'context' | 'matches'>;

/**
 * The machine as it is now, kept: what `until` resolves with, so that its caller reads the state the predicate
 * held in even if the machine steps on before the caller runs (the lean executor changes context in place).
 */
function snapshotOf(machine: OutboxRun & { value: unknown }): OutboxRun {
  const value = machine.value;
  return {
    status: machine.status,
    context: { ...machine.context },
    matches: (test) => matchesValue(test, value),
  };
}

/** The outbox's children that call the store, and take no signal. */
const STORE_CALLS: ReadonlySet<string> = new Set([
  'loadEntries',
  'acquireLease',
  'releaseLease',
  'commitEntry',
]);

/** The outbox machine, and the machine of each entry in flight that it starts (`outboxEntry`). */
const outboxDefinition = {
  table: outboxTable,
  logic: outboxLogic,
  machines: { outboxEntry: childMachine(outboxEntryTable, outboxEntryLogic) },
};

/** Nothing in flight and nothing can start now (or the machine has stopped). */
function isQuiet(snapshot: OutboxRun): boolean {
  if (snapshot.status !== 'active') return true;
  if (snapshot.matches('loadFailed')) return true;
  if (!snapshot.matches('running')) return false;
  const leaseIdle =
    snapshot.matches({ running: { lease: 'released' } }) ||
    snapshot.matches({ running: { lease: 'waitingForLease' } });
  return leaseIdle && !hasWorkInFlight(snapshot.context);
}

/**
 * Creates and drives the outbox machine: the one place that creates an outbox actor. It turns the store, the
 * clock and the `send` function into the machine's actors, stamps every event with `clock.now()`, and relays
 * connectivity hints (CONTRACT rule 6: they only schedule work).
 */
export function createOutboxRunner(options: OutboxRunnerOptions): OutboxRunner {
  const { store, clock, policy, connectivity } = options;
  const owner = options.owner ?? globalThis.crypto.randomUUID();
  const now = () => clock.now();
  const online = () => connectivity?.current() !== 'offline';

  // Store calls in flight; close() waits for them, so that a write it did not stop is not cut in half.
  const inFlight = new Set<Promise<unknown>>();
  const tracked = <T>(promise: Promise<T>): Promise<T> => {
    const settled = promise.then(
      () => undefined,
      () => undefined,
    );
    inFlight.add(settled);
    void settled.then(() => inFlight.delete(settled));
    return promise;
  };
  /** A store call the scheduler waits on: tracked, and taken as failed after STORE_ANSWER_MS without an answer. */
  const answerWatches = new Set<() => void>();
  const answered = <T>(promise: Promise<T>, what: string): Promise<T> =>
    answeredWithin(clock, tracked(promise), STORE_ANSWER_MS, what, answerWatches);

  /** The store's per-entry claims, when it has them: every runner sends, each entry claimed by one at a time. */
  const claims = store.claims;
  /** Entries read from the store, queued in this runner's own order when it shares the queue (claim-spread.ts). */
  const inClaimOrder = (entries: OutboxEntryRecord[]) =>
    claims && policy.durable.order === 'per-key' ? spreadUnkeyed(entries, owner) : entries;

  /**
   * Entries other runners held when last asked (`claims.heldElsewhere`), until their claims end: a claim of one of
   * them is answered here, without a store call, for CLAIM_RECHECK_MS after the list was read (as long as a
   * `taken` answer from the store lasts): the holder most likely still sends it, or has sent it.
   */
  let heldElsewhere = new Map<string, number>();
  let heldElsewhereAt = -Infinity;
  const takenUntil = (from: number, until: number) =>
    from + Math.min(Math.max(until - from, CLAIM_RECHECK_MIN_MS), CLAIM_RECHECK_MS);

  /**
   * Entries as their claim answered them, until their send takes them: a claim and the read before the send
   * would otherwise be two round trips to the store for the same row, which no other runner can change while the
   * claim lasts. Kept with the claim's end: a send that starts later (the device went offline in between, say)
   * reads the store, since another runner may have claimed the entry once this claim ran out.
   */
  const claimedEntries = new Map<string, { entry: OutboxEntry; until: number }>();

  /** Claims the entry for this runner in a store with per-entry claims, counting its attempt. */
  const claimEntry = async (claims: OutboxClaims, id: string, attempts: number): Promise<CommitOutcome> => {
    const at = now();
    const known = heldElsewhere.get(id);
    if (known !== undefined && known > at && at - heldElsewhereAt < CLAIM_RECHECK_MS)
      return { status: 'taken', until: takenUntil(at, known) };
    const answer = await answered(
      claims.claim({
        id,
        owner,
        attempts,
        claimMs: OUTBOX_LEASE_TTL_MS,
        now: at,
        order: policy.durable.order,
        // flush() brings backoff forward for the entries it sends (never a server's Retry-After: the store checks).
        ignoreBackoff: flushCounts.size > 0,
      }),
      'store.claims.claim',
    );
    switch (answer.status) {
      case 'claimed':
        if (answer.stored) claimedEntries.set(id, { entry: answer.stored, until: at + OUTBOX_LEASE_TTL_MS });
        return { status: 'committed' };
      case 'stale':
        // Counted by another runner since: it most likely holds it, and others of this runner's queue too.
        await learnHeldElsewhere(claims, at);
        return { status: 'stale', stored: entryRecordOf(answer.stored) };
      case 'missing':
        await forgetGone(claims, id, at);
        return { status: 'missing' };
      case 'taken': {
        // Another runner is sending: the ones it holds besides this are skipped without asking one by one.
        await learnHeldElsewhere(claims, at);
        return { status: 'taken', until: takenUntil(at, answer.until) };
      }
    }
  };

  /** Reads which entries other runners hold (`claims.heldElsewhere`), at most once per CLAIM_RECHECK_MIN_MS. */
  const learnHeldElsewhere = async (claims: OutboxClaims, at: number) => {
    if (at - heldElsewhereAt < CLAIM_RECHECK_MIN_MS) return;
    heldElsewhereAt = at;
    const held = await answered(claims.heldElsewhere(owner, at), 'store.claims.heldElsewhere').catch(
      () => [],
    );
    heldElsewhere = new Map(held.map(({ id, until }) => [id, until]));
  };

  let goneAskedAt = -Infinity;
  /**
   * One entry was gone from the store: other runners have most likely sent more of this runner's queue. The
   * pending ones the store no longer has are forgotten at once (`claims.gone`), at most once per
   * CLAIM_RECHECK_MIN_MS, instead of each costing a claim that answers `missing`.
   */
  const forgetGone = async (claims: OutboxClaims, missing: string, at: number) => {
    if (at - goneAskedAt < CLAIM_RECHECK_MIN_MS) return;
    goneAskedAt = at;
    const ids = machine.context.entries
      .filter((e) => e.status === 'pending' && e.id !== missing)
      .map((e) => e.id);
    const gone = await answered(claims.gone(ids), 'store.claims.gone').catch(() => []);
    for (const id of gone) if (!closing) machine.send({ type: 'entry.missing', id, at: now() });
  };

  const commit = async ({ id, commit }: { id: string; commit: OutboxCommit }): Promise<CommitOutcome> => {
    if (commit.op === 'claim' && claims) return claimEntry(claims, id, commit.attempts);
    if (commit.op === 'remove') {
      await answered(store.remove(id), 'store.remove');
      return { status: 'committed' };
    }
    const stored = await answered(store.get(id), 'store.get');
    if (!stored) return { status: 'missing' };
    // A claim applies only to the entry the machine knows: another runner may have sent or counted it since.
    if (commit.op === 'claim' && (stored.status !== 'pending' || stored.attempts !== commit.attempts - 1))
      return { status: 'stale', stored: entryRecordOf(stored) };
    await answered(store.update(applyCommit(stored, commit)!), 'store.update');
    return { status: 'committed' };
  };

  const sendEntry = async (
    { id, attempt }: SendEntryInput,
    signal: AbortSignal,
  ): Promise<SendResult | 'missing' | 'skipped'> => {
    const claimed = claimedEntries.get(id);
    claimedEntries.delete(id);
    let entry = claimed && claimed.until > now() ? claimed.entry : undefined;
    try {
      entry ??= await answered(store.get(id), 'store.get');
    } catch (error) {
      // Nothing was sent; the attempt was counted already, and another one may succeed.
      const name = errorNameOf(error);
      return {
        result: 'failed',
        failure: {
          class: 'unexpected',
          requestSent: 'no',
          origin: '',
          message: `store.get failed (${name})`,
        },
        attempts: 1,
        retryable: true,
      };
    }
    if (!entry) return 'missing';
    // Another runner moved the entry on since this one counted the attempt (sent it, counted more attempts,
    // dead-lettered it): it is not this runner's to send. Forgotten here; a rescan reads it as the store has it.
    if (entry.status !== 'pending' || entry.attempts !== attempt) return 'missing';
    // Offline since the machine started this send: send nothing (rule 6); the counted attempt is kept.
    if (!online()) return 'skipped';
    // Stopped (close(), remove(id)) while the store was read: nothing may start after that.
    if (signal.aborted) return 'missing';
    return options.send(entry, signal);
  };

  // Resolved when the machine changes (or ends): `until` re-checks what it waits for.
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };
  let failure: unknown;
  // The machine's first steps (during start) run before `machine` is assigned.
  let started = false;
  /**
   * Ids written since a read of the store began (`LoadEntriesOutput.keep`), one list per read. The list is the
   * read's output itself, and grows until the machine has taken that output in: an entry enqueued after the read
   * resolved but before the machine saw it is not taken for removed.
   */
  const reads = new Set<string[]>();
  const loadEntries = async () => {
    const keep: string[] = [];
    reads.add(keep);
    try {
      // The machine gets summaries, never the stored requests (their queries, headers, bodies and keys).
      return {
        entries: inClaimOrder((await answered(store.list(), 'store.list')).map(entryRecordOf)),
        complete: true,
        keep,
        at: now(),
      };
    } catch (error) {
      reads.delete(keep);
      throw error;
    }
  };
  /** The machine took the reads in once it is neither loading nor rescanning. */
  const settleReads = () => {
    if (started && !machine.matches('loading') && !machine.matches({ running: { lease: 'rescanning' } }))
      reads.clear();
  };
  /** The store's last answer to a lease request: what a flush that ends waiting for the lease reports. */
  let leaseAnswer: FlushFacts['lease'] = 'free';
  const askLease = async (ttlMs: number) => {
    // Per-entry claims need no lease: every runner sends. Asking for it renews the claims this runner holds.
    if (claims) {
      await answered(claims.renew(owner, ttlMs, now()), 'store.claims.renew');
      return { held: true, at: now() };
    }
    try {
      const held = await answered(store.acquireLease(owner, ttlMs, now()), 'store.acquireLease');
      leaseAnswer = held ? 'free' : 'refused';
      return { held, at: now() };
    } catch (error) {
      leaseAnswer = 'failed';
      throw error;
    }
  };
  /** The counts of each flush in progress: entries sent and dead-lettered while it runs. */
  const flushCounts = new Set<{ sent: number; failed: number }>();
  const count = (event: OutboxMachineEmitted) => {
    for (const counts of flushCounts) {
      if (event.type === 'entry-sent') counts.sent += 1;
      if (event.type === 'entry-dead-lettered') counts.failed += 1;
    }
  };
  const prepared = (options.runner ?? leanRunner).prepare(outboxDefinition, {
    clock,
    // Store calls cannot be called off once made (a write that was asked for lands or fails): only a send
    // listens to its signal, which close() aborts.
    ignoresSignal: STORE_CALLS,
    actors: {
      loadEntries,
      acquireLease: ({ ttlMs }: AcquireLeaseInput) => askLease(ttlMs),
      // With per-entry claims there is no lease to give back: each claim ends when its entry is written.
      releaseLease: () =>
        claims ? Promise.resolve() : answered(store.releaseLease(owner), 'store.releaseLease'),
    },
    spawned: {
      commitEntry: (input: CommitEntryInput, signal: AbortSignal) =>
        replyOf(commit, commitEntryReply, input, signal, now),
      sendEntry: (input: SendEntryInput, signal: AbortSignal) =>
        replyOf(sendEntry, sendEntryReply, input, signal, now),
    },
  });
  const input = { policy, now: now(), online: online(), leaseTtlMs: OUTBOX_LEASE_TTL_MS };
  const machine: MachineRun<OutboxMachineContext> = prepared.start(input, {
    emitted: (event) => {
      count(event as OutboxMachineEmitted);
      try {
        options.onEmitted?.(event as OutboxMachineEmitted);
      } catch {
        // A listener's failure is its own: the outbox goes on.
      }
    },
    changed: () => {
      settleReads();
      wake();
    },
    ended: (end) => {
      if (end.status === 'error') failure = end.error;
      wake();
    },
  });

  started = true;

  /**
   * Per-entry claims: while idle, reads the store every CLAIM_POLL_MS and takes in the entries it does not know
   * (written by other processes, or left by one that died). Busy, it reads the store each time it starts again.
   */
  let pollTimer: unknown;
  /** Takes in the stored entries the machine does not know. */
  const takeInStored = async () => {
    const stored = await answered(store.list(), 'store.list');
    const known = new Set(machine.context.entries.map((e) => e.id));
    for (const entry of inClaimOrder(stored.filter((e) => !known.has(e.id)).map(entryRecordOf))) {
      if (closing) continue;
      machine.send({ type: 'outbox.enqueued', entry, at: now() });
    }
  };
  const poll = async () => {
    try {
      if (machine.status === 'active' && machine.matches({ running: { lease: 'released' } }))
        await takeInStored();
    } catch {
      // The store did not answer: the next poll asks again.
    } finally {
      if (!closing) pollTimer = clock.setTimeout(() => void poll(), CLAIM_POLL_MS);
    }
  };
  if (claims) pollTimer = clock.setTimeout(() => void poll(), CLAIM_POLL_MS);

  let closing: Promise<void> | undefined;
  const unsubscribe = connectivity?.subscribe((hint) => {
    // `changed` (a network switch) says nothing about being online: only online/offline schedule work.
    // A hint failwise does not know (the client's own listener refuses it) schedules nothing.
    if (closing || hint === 'changed' || !isConnectivityHint(hint)) return;
    machine.send({ type: 'connectivity.changed', online: hint === 'online', at: now() });
  });

  /** Resolves once `predicate` holds (now or after a later step) or the machine ends, with the machine as it was then. */
  const until = (predicate: (run: OutboxRun) => boolean) =>
    new Promise<OutboxRun>((resolve) => {
      const done = () => machine.status !== 'active' || predicate(machine);
      if (done()) return resolve(snapshotOf(machine));
      const waiter = () => {
        if (!done()) return;
        waiters.delete(waiter);
        resolve(snapshotOf(machine));
      };
      waiters.add(waiter);
    });

  const assertOpen = (method: string) => {
    if (closing) throw new StateError(`failwise outbox: ${method}() was called after close()`);
    if (failure !== undefined)
      throw new StateError(`failwise outbox: the scheduler stopped on an error`, { cause: failure });
  };

  /** Pauses of flushes waiting for the lease: close() ends them. */
  const pauses = new Set<() => void>();
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const end = () => {
        pauses.delete(end);
        clock.clearTimeout(timer);
        resolve();
      };
      const timer = clock.setTimeout(end, ms);
      pauses.add(end);
    });
  /** Quiet, with entries waiting, because another live runner refused the lease. */
  const waitsForLease = (s: OutboxRun) =>
    s.status === 'active' &&
    s.matches({ running: { lease: 'waitingForLease' } }) &&
    leaseAnswer === 'refused' &&
    s.context.entries.some((e) => e.status !== 'dead');

  return {
    async enqueue(entry, abandoned) {
      assertOpen('enqueue');
      // Written first (CONTRACT rule 10): the scheduler only hears of entries the store already has.
      // Per-entry claims: written claimed by this runner, so that no other one sends it before this one knows
      // whether its request still wants it (`abandoned`).
      await tracked(claims ? claims.add(entry, owner, OUTBOX_LEASE_TTL_MS, now()) : store.add(entry));
      // Its request ended while the write was under way (the budget ran out, or the client closed): the request
      // said nothing was stored, so nothing may be sent.
      if (abandoned?.aborted) return void (await tracked(store.remove(entry.id)));
      for (const keep of reads) keep.push(entry.id);
      if (!closing) machine.send({ type: 'outbox.enqueued', entry: entryRecordOf(entry), at: now() });
    },
    size: async () => (await store.list()).length,
    list: () => store.list(),
    async flush() {
      assertOpen('flush');
      const counts = { sent: 0, failed: 0 };
      flushCounts.add(counts);
      try {
        let quiet = await until((s) => !s.matches('loading'));
        const deadline = now() + policy.durable.flushWaitMs;
        if (quiet.status === 'active' && !quiet.matches('loadFailed')) {
          // Per-entry claims: other processes' entries are this runner's to send too.
          if (claims) await takeInStored().catch(() => undefined);
          machine.send({ type: 'outbox.flush', at: now() });
          quiet = await until(isQuiet);
          // Another live runner holds the lease: it gives it back once idle (a dead one's is free at once).
          while (!closing && waitsForLease(quiet) && now() < deadline) {
            await pause(Math.min(FLUSH_LEASE_POLL_MS, deadline - now()));
            if (closing) break;
            machine.send({ type: 'outbox.flush', at: now() });
            machine.send({ type: 'outbox.askForLease', at: now() });
            quiet = await until(isQuiet);
          }
        }
        return flushResultOf(quiet.context, {
          ...counts,
          online: online(),
          loadFailed: quiet.matches('loadFailed'),
          lease: quiet.matches({ running: { lease: 'waitingForLease' } }) ? leaseAnswer : 'free',
        });
      } finally {
        flushCounts.delete(counts);
      }
    },
    async started(id) {
      const begun = (s: OutboxRun) => {
        const status = s.context.entries.find((e) => e.id === id)?.status;
        return status === 'claiming' || status === 'sending' || status === 'committing';
      };
      const snapshot = await until((s) => begun(s) || (isQuiet(s) && !s.matches('loading')));
      return snapshot.status === 'active' && begun(snapshot);
    },
    async settled(id) {
      const entryOf = (s: OutboxRun) => s.context.entries.find((e) => e.id === id);
      const snapshot = await until((s) => {
        const entry = entryOf(s);
        return entry === undefined || !isInFlight(entry);
      });
      const status = entryOf(snapshot)?.status;
      // A send the runner's close() cut short leaves its entry pending in the store.
      return status === undefined || status === 'dead' ? status : 'pending';
    },
    async retry(id) {
      assertOpen('retry');
      const loaded = await until((s) => !s.matches('loading'));
      const entry = loaded.context.entries.find((e) => e.id === id);
      if (loaded.status !== 'active' || !loaded.matches('running') || entry?.status !== 'dead') return false;
      machine.send({ type: 'outbox.retry', id, at: now() });
      const after = await until((s) => s.context.entries.find((e) => e.id === id)?.status !== 'committing');
      // Revived, the entry may be claimed in the same step: anything but dead (or gone) means it is queued.
      const status = after.context.entries.find((e) => e.id === id)?.status;
      return status !== undefined && status !== 'dead';
    },
    async remove(id) {
      assertOpen('remove');
      const had = (await tracked(store.get(id))) !== undefined;
      await tracked(store.remove(id));
      // The scheduler forgets it, and stops a send or write in flight for it.
      if (!closing) machine.send({ type: 'entry.missing', id, at: now() });
      return had;
    },
    close() {
      closing ??= (async () => {
        unsubscribe?.();
        if (pollTimer !== undefined) clock.clearTimeout(pollTimer);
        for (const end of [...pauses]) end();
        machine.send({ type: 'outbox.close' });
        // Stopping the machine clears its timers and stops its children (aborting sends in flight).
        machine.stop();
        claimedEntries.clear();
        wake();
        // The machine hears no more answers: their watch timers go (close() leaves no timer running).
        for (const stop of [...answerWatches]) stop();
        // Writes already started are waited for, so that none is cut in half, but not forever: a store that
        // never answers must not hang the app's shutdown (a write cut off is as a crash leaves it).
        while (inFlight.size > 0) {
          if (!(await settledWithin(clock, Promise.all([...inFlight]), STORE_WAIT_MS))) break;
        }
        // Claims of sends cut short go back at once, so other runners send them without waiting for their time.
        await settledWithin(
          clock,
          claims ? claims.releaseAll(owner) : store.releaseLease(owner),
          STORE_WAIT_MS,
        );
      })();
      return closing;
    },
  };
}
