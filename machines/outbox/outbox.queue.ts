import { deadBeforeSend, durableExpiresAt } from '../../src/policy/durable-backoff.js';
import type { DurablePolicy } from '../../src/policy/policy.js';
import type { OutboxEntrySummary, OutboxMachineContext, PlannedWork } from './outbox.types.js';

// The outbox's queue as its guards, delays and actions read it (outbox.logic.ts): what can start now
// (`planDispatch`), when the machine next wakes (`nextWakeAt`), what is in flight. Pure functions of the machine's
// queue and policy; not src/policy, because they read the machine's own entry states (`claiming`, `sending`, ...).

/**
 * What the outbox's guards and scheduler ask of the whole queue on every step (how many entries are in flight,
 * whether any could be dead-lettered, when the next one falls due), answered without a walk of the queue on each
 * question. A queue is never changed in place (every change makes a new array), so what does not depend on the
 * time is computed once per queue array and kept beside it in a WeakMap: a cache of a pure function, gone with
 * the array, which no caller can tell from computing it again.
 */
export interface QueueFacts {
  /** Entries whose store write or send is in flight (`claiming`, `sending`, `committing`). */
  inFlight: number;
  /** Entries that hold a sending slot (`claiming`, `sending`): `durable.concurrency` bounds these. */
  sending: number;
  /** The `createdAt` of the oldest pending entry, the first to expire (`Infinity` if none is pending). */
  oldestCreatedAt: number;
  /** Whether some pending entry has used its attempts (it is dead-lettered once its hold-off, if any, ends). */
  exhausted: boolean;
  /** Pending entries with a decision to write again (`decided`): written whatever the slots and connectivity. */
  decided: number;
}

type Queue = readonly OutboxEntrySummary[];

/** An entry whose store write or send is in flight. */
export const isInFlight = (entry: OutboxEntrySummary) =>
  entry.status === 'claiming' || entry.status === 'sending' || entry.status === 'committing';

/** The attempts an entry has made: one counted but not made yet (`counted`) is not one of those used. */
export const attemptsMade = (entry: OutboxEntrySummary) =>
  entry.counted ? entry.attempts - 1 : entry.attempts;
type Limits = Pick<DurablePolicy, 'maxAttempts' | 'maxAgeMs'>;

const factsByQueue = new WeakMap<Queue, { limits: Limits; facts: QueueFacts }>();

/** The queue's facts under `limits` (the policy's durable part), computed once per queue array. */
export function queueFacts(entries: Queue, limits: Limits): QueueFacts {
  const known = factsByQueue.get(entries);
  if (known?.limits === limits) return known.facts;
  const facts: QueueFacts = {
    inFlight: 0,
    sending: 0,
    oldestCreatedAt: Infinity,
    exhausted: false,
    decided: 0,
  };
  for (const entry of entries) {
    if (entry.status === 'claiming' || entry.status === 'sending') facts.sending += 1;
    if (isInFlight(entry)) facts.inFlight += 1;
    if (entry.status !== 'pending') continue;
    if (entry.decided !== undefined) facts.decided += 1;
    facts.oldestCreatedAt = Math.min(facts.oldestCreatedAt, entry.createdAt);
    if (attemptsMade(entry) >= limits.maxAttempts) facts.exhausted = true;
  }
  factsByQueue.set(entries, { limits, facts });
  return facts;
}

/** A wake time found for a queue: right for any later `now` before it (no candidate lies between). */
interface KnownWake {
  online: boolean;
  limits: Limits;
  now: number;
  at: number;
}

const wakeByQueue = new WeakMap<Queue, KnownWake>();

/**
 * The earliest time after `key.now` that `walk` finds in the queue (`nextWakeAt`'s walk), remembered per queue
 * array: asked again for the same queue (and connectivity and limits) at a later `now` that has not reached it,
 * it is still the earliest (every other time the walk considers is at or before the earlier `now`, or after it),
 * so the queue is walked again only once that time has passed, or for an earlier `now`.
 */
export function earliestAfter(
  entries: Queue,
  key: { online: boolean; limits: Limits; now: number },
  walk: () => number,
): number {
  const known = wakeByQueue.get(entries);
  if (
    known !== undefined &&
    known.online === key.online &&
    known.limits === key.limits &&
    known.now <= key.now &&
    key.now < known.at
  )
    return known.at;
  const at = walk();
  wakeByQueue.set(entries, { ...key, at });
  return at;
}

/**
 * The next time something falls due: the earliest future `nextAttemptAt` of a pending entry (while online) or
 * expiry (online or not), neither before the end of a store hold-off. `Infinity` when nothing waits for a time.
 */
export function nextWakeAt(context: OutboxMachineContext): number {
  const limits = context.policy.durable;
  return earliestAfter(context.entries, { online: context.online, limits, now: context.now }, () => {
    let next = Infinity;
    const consider = (at: number) => {
      if (at > context.now && at < next) next = at;
    };
    for (const entry of context.entries) {
      if (entry.status !== 'pending') continue;
      const held = entry.heldUntil ?? -Infinity;
      // A decision to write again waits for its hold-off only: a store write needs no network.
      if (entry.decided !== undefined) {
        consider(held);
        continue;
      }
      consider(Math.max(held, durableExpiresAt(limits, entry.createdAt)));
      if (context.online) consider(Math.max(held, entry.nextAttemptAt));
    }
    return next;
  });
}

/**
 * What to start now, in queue order:
 * - a decision whose write failed (`decided`: a removal, a reschedule, a dead-lettering) is written again, whatever
 *   its place and connectivity (no request is sent);
 * - a pending entry that is expired or has used its attempts is dead-lettered, whatever its place and
 *   connectivity (no request is sent);
 * - an entry held off after a failed store write starts nothing until its hold-off ends;
 * - a pending entry is claimed for sending (its attempt counted in the store) when online, not paused, due,
 *   and not blocked, while fewer than `concurrency` entries are claiming or sending. Blocked means an earlier entry of
 *   its group is not done or dead: with `order: 'fifo'` every entry is in one group, so the head of the queue
 *   blocks the rest, even while it waits for its backoff (as WorkManager's chained work and Workbox's queue
 *   replay do); with `per-key`, entries with the same `orderKey` form a group and an entry without one waits for
 *   nobody. An entry whose attempt is counted already is sent without another claim.
 */
export function planDispatch(context: OutboxMachineContext): PlannedWork[] {
  const { durable } = context.policy;
  const facts = queueFacts(context.entries, durable);
  let slots = durable.concurrency - facts.sending;
  // Nothing to write without a send (a dead-lettering, a decision) and no slot to fill: the rest of the queue
  // cannot start anything, so it is not walked (a long queue behind a full set of sends costs nothing per step).
  // (The age test is deadBeforeSend's, for the oldest entry: if any pending entry has expired, that one has.)
  const mayWriteUnsent =
    facts.exhausted || facts.decided > 0 || context.now - facts.oldestCreatedAt >= durable.maxAgeMs;
  const canSend = context.online && context.paused !== true;
  const canClaim = () => canSend && slots > 0;
  const plans: PlannedWork[] = [];
  if (!mayWriteUnsent && !canClaim()) return plans;
  const blockedGroups = new Set<string>();
  for (const entry of context.entries) {
    if (!mayWriteUnsent && !canClaim()) break;
    if (entry.status === 'dead') continue;
    const group = durable.order === 'fifo' ? '' : entry.orderKey;
    const blocked = group !== undefined && blockedGroups.has(group);
    if (group !== undefined) blockedGroups.add(group);
    // After a failed write, the entry waits out its hold-off: no write of any kind (it still blocks its group).
    if (entry.status !== 'pending' || (entry.heldUntil ?? -Infinity) > context.now) continue;
    // A decision whose write failed is written again, whatever the slots and connectivity: its send is over.
    if (entry.decided !== undefined) {
      plans.push({ id: entry.id, commit: entry.decided });
      continue;
    }
    const reason = deadBeforeSend(
      durable,
      { attempts: attemptsMade(entry), createdAt: entry.createdAt },
      context.now,
    );
    if (reason) {
      plans.push({ id: entry.id, commit: { op: 'dead-letter', attempts: entry.attempts, reason } });
    } else if (!blocked && canClaim() && entry.nextAttemptAt <= context.now) {
      plans.push(
        entry.counted
          ? { id: entry.id, send: { id: entry.id, attempt: entry.attempts } }
          : { id: entry.id, commit: { op: 'claim', attempts: entry.attempts + 1 } },
      );
      slots -= 1;
    }
  }
  return plans;
}

/** Whether any entry has a write or a send in flight. */
export const hasWorkInFlight = (context: OutboxMachineContext) =>
  queueFacts(context.entries, context.policy.durable).inFlight > 0;

/** Whether a decision whose write failed waits to be written again (`decided`). */
export const hasDecisionToWrite = (context: OutboxMachineContext) =>
  queueFacts(context.entries, context.policy.durable).decided > 0;
