import { StateError } from '../errors/state-error.js';
import {
  commitEntryReply,
  entryRecordOf,
  replyOf,
  sendEntryReply,
} from '../../machines/outbox/outbox.replies.js';
import { hasWorkInFlight, isInFlight, nextWakeAt } from '../../machines/outbox/outbox.queue.js';
import { outboxLogic } from '../../machines/outbox/outbox.logic.js';
import { outboxTable } from '../../machines/outbox/outbox.table.js';
import { outboxEntryLogic } from '../../machines/outbox-entry/outbox-entry.logic.js';
import { outboxEntryTable } from '../../machines/outbox-entry/outbox-entry.table.js';
import type {
  AcquireLeaseInput,
  CommitEntryInput,
  CommitOutcome,
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
import { matchesValue } from '../engine/algorithm.js';
import { spreadUnkeyed } from './claim-spread.js';
import { STORE_WAIT_MS, settledWithin } from './bounded-wait.js';
import { OutboxClaimer } from './outbox-claimer.js';
import { StoreCalls } from './outbox-store-calls.js';
import { CLAIM_POLL_MS, FLUSH_LEASE_POLL_MS, OUTBOX_LEASE_TTL_MS } from './outbox-timing.js';
import { flushResultOf, type FlushFacts, type FlushResult } from './flush-result.js';

export {
  CLAIM_POLL_MS,
  CLAIM_RECHECK_MIN_MS,
  CLAIM_RECHECK_MS,
  FLUSH_LEASE_POLL_MS,
  OUTBOX_LEASE_TTL_MS,
} from './outbox-timing.js';

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
  /** Draws in [0, 1) for the backoff's jitter (`policy.durable.jitter`). @default none: waits are exact */
  random?: (() => number) | undefined;
}

export interface OutboxRunner {
  /**
   * Writes the entry to the store, then hands it to the scheduler. Rejects (and schedules nothing) when the write
   * fails. When `abandoned` has aborted by the time the write lands (its request ended without it), the entry is
   * removed again instead: nothing is sent for it. `landed` is called once the store has the entry, before that.
   * Resolves `true` when the entry is kept (and scheduled), `false` when it was taken back.
   */
  enqueue(entry: OutboxEntry, abandoned?: AbortSignal, landed?: () => void): Promise<boolean>;
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
   * Sends what is due, as the runner does anyway (backoff and Retry-After kept, connectivity, order and the lease
   * too), for at most `timeLimitMs`: it waits for the lease another live runner holds (asking every
   * `FLUSH_LEASE_POLL_MS`) and for entries that fall due before then. Once `timeLimitMs` is spent no send starts
   * until it resolves; sends already started are awaited (each ends within its request's budget). Resolves as
   * soon as nothing is in flight and nothing falls due within the limit, with what it sent, what it
   * dead-lettered, what is still pending and why. The runner then goes on as usual, from the next turn of the
   * clock (so that a `close()` called at once starts nothing more).
   */
  drain(timeLimitMs: number): Promise<FlushResult>;
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
 * connectivity hints (they only schedule work).
 */
export function createOutboxRunner(options: OutboxRunnerOptions): OutboxRunner {
  return new Outbox(options);
}

/** The outbox runner: the outbox machine, the store calls that answer it, and what callers wait for. */
class Outbox implements OutboxRunner {
  readonly #options: OutboxRunnerOptions;
  readonly #store: OutboxStore;
  readonly #clock: Clock;
  readonly #owner: string;
  readonly #calls: StoreCalls;
  /** The store's per-entry claims, when it has them: every runner sends, each entry claimed by one at a time. */
  readonly #claims: OutboxClaims | undefined;
  readonly #claimer: OutboxClaimer | undefined;
  #machine!: MachineRun<OutboxMachineContext>;
  // The machine's first steps (during start) run before `#machine` is assigned.
  #started = false;
  #failure: unknown;
  #closing: Promise<void> | undefined;
  // Resolved when the machine changes (or ends): `until` re-checks what it waits for.
  readonly #waiters = new Set<() => void>();
  /**
   * Ids written since a read of the store began (`LoadEntriesOutput.keep`), one list per read. The list is the
   * read's output itself, and grows until the machine has taken that output in: an entry enqueued after the read
   * resolved but before the machine saw it is not taken for removed.
   */
  readonly #reads = new Set<string[]>();
  /** The store's last answer to a lease request: what a flush that ends waiting for the lease reports. */
  #leaseAnswer: FlushFacts['lease'] = 'free';
  /**
   * The counts of each flush or drain in progress: entries sent and dead-lettered while it runs. A flush hurries
   * (brings backoff forward); a drain does not.
   */
  readonly #tallies = new Set<{ sent: number; failed: number; hurries: boolean }>();
  /** Drains whose time is spent and that wait for their sends: no send starts while there is one. */
  #holds = 0;
  /** The timer that lets sends start again after the last such drain resolved. */
  #resumeTimer: unknown;
  /** Pauses of flushes waiting for the lease: close() ends them. */
  readonly #pauses = new Set<() => void>();
  /**
   * Per-entry claims: while idle, reads the store every CLAIM_POLL_MS and takes in the entries it does not know
   * (written by other processes, or left by one that died). Busy, it reads the store each time it starts again.
   */
  #pollTimer: unknown;
  readonly #unsubscribe: (() => void) | undefined;

  constructor(options: OutboxRunnerOptions) {
    const { store, clock, policy, connectivity } = options;
    this.#options = options;
    this.#store = store;
    this.#clock = clock;
    const owner = (this.#owner = options.owner ?? globalThis.crypto.randomUUID());
    this.#calls = new StoreCalls(clock);
    const claims = (this.#claims = store.claims);
    this.#claimer = claims && this.#claimerOf(claims, owner, policy);
    this.#startMachine();
    this.#started = true;
    if (claims) this.#pollTimer = clock.setTimeout(() => void this.#poll(), CLAIM_POLL_MS);
    this.#unsubscribe = connectivity?.subscribe((hint) => {
      // `changed` (a network switch) says nothing about being online: only online/offline schedule work.
      // A hint failwise does not know (the client's own listener refuses it) schedules nothing.
      if (this.#closing || hint === 'changed' || !isConnectivityHint(hint)) return;
      this.#machine.send({ type: 'connectivity.changed', online: hint === 'online', at: this.#now() });
    });
  }

  async enqueue(entry: OutboxEntry, abandoned?: AbortSignal, landed?: () => void): Promise<boolean> {
    this.#assertOpen('enqueue');
    const store = this.#store;
    const claims = this.#claims;
    // Written first: the scheduler only hears of entries the store already has. Per-entry claims: written
    // claimed by this runner, so that no other one sends it before this one knows whether its request still
    // wants it (`abandoned`).
    // A replaceKey: the pending entries with it that this runner is not sending go in the same write.
    const candidates = entry.replaceKey === undefined ? [] : await this.#replaceable(entry);
    const replaces = candidates.map(({ id, attempts }) => ({ id, attempts }));
    const written = await this.#calls.tracked(
      claims
        ? claims.add(entry, this.#owner, OUTBOX_LEASE_TTL_MS, this.#now(), replaces, abandoned)
        : store.add(entry, replaces, abandoned),
    );
    // The store saw that the request had given up before it wrote: nothing to take back.
    if (written === false) return false;
    const replaced = written ?? [];
    landed?.();
    // Its request ended while the write was under way (the budget ran out, or the client closed): the request
    // said nothing was stored, so nothing may be sent, and what it replaced is put back (as it was read).
    if (abandoned?.aborted) {
      await this.#calls.tracked(store.remove(entry.id));
      for (const old of candidates.filter(({ id }) => replaced.includes(id)))
        await this.#calls.tracked(store.add(old)).catch(() => undefined);
      return false;
    }
    for (const id of replaced) {
      if (!this.#closing) this.#machine.send({ type: 'entry.missing', id, at: this.#now() });
      this.#onEmitted({ type: 'entry-replaced', id, by: entry.id, at: this.#now() });
    }
    for (const keep of this.#reads) keep.push(entry.id);
    if (!this.#closing)
      this.#machine.send({ type: 'outbox.enqueued', entry: entryRecordOf(entry), at: this.#now() });
    return true;
  }

  /** The stored entries `entry` replaces: pending, with its replaceKey, and not in flight here. */
  async #replaceable(entry: OutboxEntry): Promise<OutboxEntry[]> {
    const stored = await this.#calls.tracked(this.#store.list());
    const known = this.#started ? this.#machine.context.entries : [];
    const sending = new Set(known.filter(isInFlight).map((e) => e.id));
    return stored.filter(
      (e) =>
        e.id !== entry.id &&
        e.status === 'pending' &&
        e.replaceKey === entry.replaceKey &&
        !sending.has(e.id),
    );
  }

  async size(): Promise<number> {
    return (await this.#store.list()).length;
  }

  list(): Promise<OutboxEntry[]> {
    return this.#store.list();
  }

  async flush(): Promise<FlushResult> {
    this.#assertOpen('flush');
    const counts = { sent: 0, failed: 0, hurries: true };
    this.#tallies.add(counts);
    try {
      let quiet = await this.#until((s) => !s.matches('loading'));
      const deadline = this.#now() + this.#options.policy.durable.flushWaitMs;
      if (quiet.status === 'active' && !quiet.matches('loadFailed')) {
        // Per-entry claims: other processes' entries are this runner's to send too.
        if (this.#claims) await this.#takeInStored().catch(() => undefined);
        this.#machine.send({ type: 'outbox.flush', at: this.#now() });
        quiet = await this.#until(isQuiet);
        // Another live runner holds the lease: it gives it back once idle (a dead one's is free at once).
        while (!this.#closing && this.#waitsForLease(quiet) && this.#now() < deadline) {
          await this.#pause(Math.min(FLUSH_LEASE_POLL_MS, deadline - this.#now()));
          if (this.#closing) break;
          this.#machine.send({ type: 'outbox.flush', at: this.#now() });
          this.#machine.send({ type: 'outbox.askForLease', at: this.#now() });
          quiet = await this.#until(isQuiet);
        }
      }
      // A drain past its limit may hold the sends (the machine paused): that, not backoff, is why due ones wait.
      return this.#resultOf(quiet, counts, quiet.context.paused === true);
    } finally {
      this.#tallies.delete(counts);
    }
  }

  async drain(timeLimitMs: number): Promise<FlushResult> {
    this.#assertOpen('drain');
    const counts = { sent: 0, failed: 0, hurries: false };
    this.#tallies.add(counts);
    const deadline = this.#now() + timeLimitMs;
    // Waiters hear of the deadline as of a change of the machine.
    const deadlineTimer = this.#clock.setTimeout(() => this.#wake(), timeLimitMs);
    const spent = () => this.#now() >= deadline;
    let held = false;
    try {
      let state = await this.#until((s) => !s.matches('loading') || spent());
      if (state.status === 'active' && state.matches('running')) {
        // What other tabs, processes or runtimes wrote since this runner read the store (a service worker that
        // has lived on since before the page wrote its entry) is sent too.
        await this.#takeInStored().catch(() => undefined);
        state = await this.#drainUntil(deadline);
      }
      const timeLimited = !this.#closing && spent();
      if (timeLimited && state.status === 'active') {
        this.#hold();
        held = true;
        state = await this.#until(isQuiet);
      }
      return this.#resultOf(state, counts, timeLimited);
    } finally {
      this.#clock.clearTimeout(deadlineTimer);
      this.#tallies.delete(counts);
      if (held) this.#release();
    }
  }

  /**
   * Waits until nothing is in flight and nothing falls due before `deadline`, or until `deadline`: asks again
   * for a lease another live runner holds every `FLUSH_LEASE_POLL_MS` meanwhile.
   */
  async #drainUntil(deadline: number): Promise<OutboxRun> {
    const done = (s: OutboxRun) =>
      this.#now() >= deadline ||
      (isQuiet(s) &&
        (this.#waitsForLease(s) || !s.matches('running') || !(nextWakeAt(s.context) < deadline)));
    for (;;) {
      const state = await this.#until(done);
      if (this.#closing || this.#now() >= deadline || !this.#waitsForLease(state)) return state;
      await this.#pause(Math.min(FLUSH_LEASE_POLL_MS, deadline - this.#now()));
      if (this.#closing) return state;
      this.#machine.send({ type: 'outbox.askForLease', at: this.#now() });
    }
  }

  /** Starts no more sends (a drain's time is spent) until `#release()`. */
  #hold(): void {
    if (this.#holds++ === 0) this.#machine.send({ type: 'outbox.pause', at: this.#now() });
  }

  /** Lets sends start again once no drain holds them, from the next turn of the clock. */
  #release(): void {
    if (--this.#holds > 0 || this.#closing) return;
    if (this.#resumeTimer !== undefined) this.#clock.clearTimeout(this.#resumeTimer);
    this.#resumeTimer = this.#clock.setTimeout(() => {
      this.#resumeTimer = undefined;
      if (this.#holds === 0 && !this.#closing) this.#machine.send({ type: 'outbox.resume', at: this.#now() });
    }, 0);
  }

  /** What a flush or a drain resolves with, from the machine as it is once it ends. */
  #resultOf(state: OutboxRun, counts: { sent: number; failed: number }, timeLimited: boolean): FlushResult {
    return flushResultOf(state.context, {
      sent: counts.sent,
      failed: counts.failed,
      online: this.#online(),
      loadFailed: state.matches('loadFailed'),
      lease: state.matches({ running: { lease: 'waitingForLease' } }) ? this.#leaseAnswer : 'free',
      timeLimited,
    });
  }

  async started(id: string): Promise<boolean> {
    const begun = (s: OutboxRun) => {
      const status = s.context.entries.find((e) => e.id === id)?.status;
      return status === 'claiming' || status === 'sending' || status === 'committing';
    };
    const snapshot = await this.#until((s) => begun(s) || (isQuiet(s) && !s.matches('loading')));
    return snapshot.status === 'active' && begun(snapshot);
  }

  async settled(id: string): Promise<'pending' | 'dead' | undefined> {
    const entryOf = (s: OutboxRun) => s.context.entries.find((e) => e.id === id);
    const snapshot = await this.#until((s) => {
      const entry = entryOf(s);
      return entry === undefined || !isInFlight(entry);
    });
    const status = entryOf(snapshot)?.status;
    // A send the runner's close() cut short leaves its entry pending in the store.
    return status === undefined || status === 'dead' ? status : 'pending';
  }

  async retry(id: string): Promise<boolean> {
    this.#assertOpen('retry');
    const loaded = await this.#until((s) => !s.matches('loading'));
    const entry = loaded.context.entries.find((e) => e.id === id);
    if (loaded.status !== 'active' || !loaded.matches('running') || entry?.status !== 'dead') return false;
    this.#machine.send({ type: 'outbox.retry', id, at: this.#now() });
    const after = await this.#until(
      (s) => s.context.entries.find((e) => e.id === id)?.status !== 'committing',
    );
    // Revived, the entry may be claimed in the same step: anything but dead (or gone) means it is queued.
    const status = after.context.entries.find((e) => e.id === id)?.status;
    return status !== undefined && status !== 'dead';
  }

  async remove(id: string): Promise<boolean> {
    this.#assertOpen('remove');
    const had = (await this.#calls.tracked(this.#store.get(id))) !== undefined;
    await this.#calls.tracked(this.#store.remove(id));
    // The scheduler forgets it, and stops a send or write in flight for it.
    if (!this.#closing) this.#machine.send({ type: 'entry.missing', id, at: this.#now() });
    return had;
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutDown();
    return this.#closing;
  }

  async #shutDown(): Promise<void> {
    this.#unsubscribe?.();
    if (this.#pollTimer !== undefined) this.#clock.clearTimeout(this.#pollTimer);
    if (this.#resumeTimer !== undefined) this.#clock.clearTimeout(this.#resumeTimer);
    for (const end of [...this.#pauses]) end();
    this.#machine.send({ type: 'outbox.close' });
    // Stopping the machine clears its timers and stops its children (aborting sends in flight).
    this.#machine.stop();
    this.#claimer?.clear();
    this.#wake();
    this.#calls.stopWatching();
    // Writes already started are waited for, so that none is cut in half, but not forever: a store that never
    // answers must not hang the app's shutdown (a write cut off is as a crash leaves it).
    let writes = this.#calls.inFlight();
    while (writes && (await settledWithin(this.#clock, writes, STORE_WAIT_MS)))
      writes = this.#calls.inFlight();
    // Claims of sends cut short go back at once, so other runners send them without waiting for their time.
    const claims = this.#claims;
    await settledWithin(
      this.#clock,
      claims ? claims.releaseAll(this.#owner) : this.#store.releaseLease(this.#owner),
      STORE_WAIT_MS,
    );
  }

  #now(): number {
    return this.#clock.now();
  }

  #online(): boolean {
    return this.#options.connectivity?.current() !== 'offline';
  }

  #claimerOf(claims: OutboxClaims, owner: string, policy: Policy): OutboxClaimer {
    return new OutboxClaimer(claims, {
      owner,
      policy,
      clock: this.#clock,
      calls: this.#calls,
      hurried: () => [...this.#tallies].some((tally) => tally.hurries),
      pendingIds: () => this.#machine.context.entries.filter((e) => e.status === 'pending').map((e) => e.id),
      forget: (id) => {
        if (!this.#closing) this.#machine.send({ type: 'entry.missing', id, at: this.#now() });
      },
    });
  }

  /** Prepares the outbox machine with the store calls and sends that answer it, and starts it. */
  #startMachine(): void {
    const { policy } = this.#options;
    const prepared = (this.#options.runner ?? leanRunner).prepare(outboxDefinition, {
      clock: this.#clock,
      // Store calls cannot be called off once made (a write that was asked for lands or fails): only a send
      // listens to its signal, which close() aborts.
      ignoresSignal: STORE_CALLS,
      actors: {
        loadEntries: () => this.#loadEntries(),
        acquireLease: ({ ttlMs }: AcquireLeaseInput) => this.#askLease(ttlMs),
        // With per-entry claims there is no lease to give back: each claim ends when its entry is written.
        releaseLease: () =>
          this.#claims
            ? Promise.resolve()
            : this.#calls.answered(this.#store.releaseLease(this.#owner), 'store.releaseLease'),
      },
      spawned: {
        commitEntry: (input: CommitEntryInput, signal: AbortSignal) =>
          replyOf(this.#commit, commitEntryReply, input, signal, () => this.#now()),
        sendEntry: (input: SendEntryInput, signal: AbortSignal) =>
          replyOf(this.#sendEntry, this.#sendEntryReply, input, signal, () => this.#now()),
      },
    });
    const input = { policy, now: this.#now(), online: this.#online(), leaseTtlMs: OUTBOX_LEASE_TTL_MS };
    this.#machine = prepared.start(input, {
      emitted: (event) => this.#onEmitted(event as OutboxMachineEmitted),
      changed: () => {
        this.#settleReads();
        this.#wake();
      },
      ended: (end) => {
        if (end.status === 'error') this.#failure = end.error;
        this.#wake();
      },
    });
  }

  #onEmitted(event: OutboxMachineEmitted): void {
    for (const counts of this.#tallies) {
      if (event.type === 'entry-sent') counts.sent += 1;
      if (event.type === 'entry-dead-lettered') counts.failed += 1;
    }
    try {
      this.#options.onEmitted?.(event);
    } catch {
      // A listener's failure is its own: the outbox goes on.
    }
  }

  #wake(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }

  /** Entries read from the store, queued in this runner's own order when it shares the queue (claim-spread.ts). */
  #inClaimOrder(entries: OutboxEntryRecord[]): OutboxEntryRecord[] {
    return this.#claims && this.#options.policy.durable.order === 'per-key'
      ? spreadUnkeyed(entries, this.#owner)
      : entries;
  }

  async #loadEntries() {
    const keep: string[] = [];
    this.#reads.add(keep);
    try {
      // The machine gets summaries, never the stored requests (their queries, headers, bodies and keys).
      const stored = await this.#calls.answered(this.#store.list(), 'store.list');
      return {
        entries: this.#inClaimOrder(stored.map(entryRecordOf)),
        complete: true,
        keep,
        at: this.#now(),
      };
    } catch (error) {
      this.#reads.delete(keep);
      throw error;
    }
  }

  /** The machine took the reads in once it is neither loading nor rescanning. */
  #settleReads(): void {
    const machine = this.#machine;
    if (
      this.#started &&
      !machine.matches('loading') &&
      !machine.matches({ running: { lease: 'rescanning' } })
    )
      this.#reads.clear();
  }

  async #askLease(ttlMs: number) {
    const calls = this.#calls;
    // Per-entry claims need no lease: every runner sends. Asking for it renews the claims this runner holds.
    if (this.#claims) {
      await calls.answered(this.#claims.renew(this.#owner, ttlMs, this.#now()), 'store.claims.renew');
      return { held: true, at: this.#now() };
    }
    try {
      const held = await calls.answered(
        this.#store.acquireLease(this.#owner, ttlMs, this.#now(), this.#clock),
        'store.acquireLease',
      );
      this.#leaseAnswer = held ? 'free' : 'refused';
      return { held, at: this.#now() };
    } catch (error) {
      this.#leaseAnswer = 'failed';
      throw error;
    }
  }

  #commit = async ({ id, commit }: { id: string; commit: OutboxCommit }): Promise<CommitOutcome> => {
    if (commit.op === 'claim' && this.#claimer) return this.#claimer.claim(id, commit.attempts);
    const calls = this.#calls;
    const store = this.#store;
    if (commit.op === 'remove') {
      await calls.answered(store.remove(id), 'store.remove');
      return { status: 'committed' };
    }
    const stored = await calls.answered(store.get(id), 'store.get');
    if (!stored) return { status: 'missing' };
    // A claim applies only to the entry the machine knows: another runner may have sent or counted it since.
    if (commit.op === 'claim' && (stored.status !== 'pending' || stored.attempts !== commit.attempts - 1))
      return { status: 'stale', stored: entryRecordOf(stored) };
    await calls.answered(store.update(applyCommit(stored, commit)!), 'store.update');
    return { status: 'committed' };
  };

  /** The machine's event for a send that ended, with a draw for its backoff's jitter. */
  #sendEntryReply = (...args: Parameters<typeof sendEntryReply>) => {
    const event = sendEntryReply(...args);
    const { random } = this.#options;
    return event.type === 'send.ended' && random ? { ...event, random: random() } : event;
  };

  #sendEntry = async (
    { id, attempt }: SendEntryInput,
    signal: AbortSignal,
  ): Promise<SendResult | 'missing' | 'skipped'> => {
    let entry = this.#claimer?.takeClaimed(id, this.#now());
    try {
      entry ??= await this.#calls.answered(this.#store.get(id), 'store.get');
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
    // Offline since the machine started this send: send nothing; the counted attempt is kept.
    if (!this.#online()) return 'skipped';
    // Stopped (close(), remove(id)) while the store was read: nothing may start after that.
    if (signal.aborted) return 'missing';
    return this.#options.send(entry, signal);
  };

  /** Takes in the stored entries the machine does not know. */
  async #takeInStored(): Promise<void> {
    const stored = await this.#calls.answered(this.#store.list(), 'store.list');
    const known = new Set(this.#machine.context.entries.map((e) => e.id));
    for (const entry of this.#inClaimOrder(stored.filter((e) => !known.has(e.id)).map(entryRecordOf))) {
      if (this.#closing) continue;
      this.#machine.send({ type: 'outbox.enqueued', entry, at: this.#now() });
    }
  }

  async #poll(): Promise<void> {
    const machine = this.#machine;
    try {
      if (machine.status === 'active' && machine.matches({ running: { lease: 'released' } }))
        await this.#takeInStored();
    } catch {
      // The store did not answer: the next poll asks again.
    } finally {
      if (!this.#closing) this.#pollTimer = this.#clock.setTimeout(() => void this.#poll(), CLAIM_POLL_MS);
    }
  }

  /** Resolves once `predicate` holds (now or after a later step) or the machine ends, with the machine as it was then. */
  #until(predicate: (run: OutboxRun) => boolean): Promise<OutboxRun> {
    const machine = this.#machine;
    return new Promise<OutboxRun>((resolve) => {
      const done = () => machine.status !== 'active' || predicate(machine);
      if (done()) return resolve(snapshotOf(machine));
      const waiter = () => {
        if (!done()) return;
        this.#waiters.delete(waiter);
        resolve(snapshotOf(machine));
      };
      this.#waiters.add(waiter);
    });
  }

  #assertOpen(method: string): void {
    if (this.#closing) throw new StateError(`failwise outbox: ${method}() was called after close()`);
    if (this.#failure !== undefined)
      throw new StateError(`failwise outbox: the scheduler stopped on an error`, { cause: this.#failure });
  }

  #pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const end = () => {
        this.#pauses.delete(end);
        this.#clock.clearTimeout(timer);
        resolve();
      };
      const timer = this.#clock.setTimeout(end, ms);
      this.#pauses.add(end);
    });
  }

  /** Quiet, with entries waiting, because another live runner refused the lease. */
  #waitsForLease(s: OutboxRun): boolean {
    return (
      s.status === 'active' &&
      s.matches({ running: { lease: 'waitingForLease' } }) &&
      this.#leaseAnswer === 'refused' &&
      s.context.entries.some((e) => e.status !== 'dead')
    );
  }
}
