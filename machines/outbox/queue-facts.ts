import type { DurablePolicy } from '../../src/policy/policy.js';
import type { OutboxEntrySummary } from './outbox.types.js';

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
