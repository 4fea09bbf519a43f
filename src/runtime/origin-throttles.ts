import {
  changesOnlyItsCount,
  initialAdaptiveRate,
  noteAnswer,
  returnSendSlot,
  takeSendSlot,
  type AdaptiveRate,
  type AdaptiveRateOptions,
} from '../policy/adaptive-rate.js';
import {
  isThrottle,
  longestCountedGapMs,
  quietCeilingMs,
  quietUntil,
  type QuietPeriodOptions,
} from '../policy/quiet-period.js';
import { parseRateLimitFields } from '../policy/rate-limit-fields.js';
import { readsRateLimitFields } from '../policy/rate-limit-reading.js';
import { intervalAfterStart } from '../policy/request-interval.js';
import { mergeQuota, takeFromQuota, type SendQuota } from '../policy/send-quota.js';

/**
 * Why an attempt must wait for its send slot: the origin's named quota is spent, the client is quiet after the
 * origin throttled, or the client's own send rate.
 */
export type SlotWait = { holdUntil: number; holdBy: 'quota' | 'quiet' | 'rate' };

/**
 * One client's send slots, per origin: the quota the origin's rate-limit fields name, the quiet period after it
 * throttled (quiet-period.ts), and the adaptive send rate its 429s set. Owned by the client, never shared
 * between clients; times come from its clock. A request whose attempt must wait books its slot (under its id)
 * when it can wait that long, and takes it when it comes back; a request that ends first gives it back.
 */
export interface OriginThrottles {
  /** A request's first attempt chose `origin` at `now`: the client's interval between request starts. */
  start(origin: string, now: number): void;
  /**
   * A slot for `requestId`'s next attempt to `origin` at `now`: `undefined` when it may start at once (the slot
   * is taken), else until when it must wait. A wait that ends before `deadline` is booked. `toldWhen`: the
   * request's own last answer named a Retry-After, so the server said when it may come back (rule 5), and a
   * quiet period does not hold it, unless the origin has throttled twice running (`SUSTAINED_THROTTLES`).
   */
  take(
    origin: string,
    requestId: string,
    now: number,
    deadline: number,
    toldWhen?: boolean,
  ): SlotWait | undefined;
  /**
   * An answer from `origin` at `at`: whether it throttled (a 429 for the send rate; a 429 or fields with nothing
   * remaining for the quiet period), and its rate-limit fields, where they are read (rate-limit-reading.ts).
   */
  observe(origin: string, status: number, headers: Headers, at: number): void;
  /** The request ended: a slot it booked and did not use goes back. */
  release(requestId: string): void;
}

interface OriginSlots {
  rate: AdaptiveRate;
  quota: SendQuota | undefined;
  /** Answers not yet noted in `rate`: each changed only its bucket's count (the common answer, made no copy). */
  uncounted: number;
  /** Answers since the last that had a rate-limit field (rate-limit-reading.ts: which answers are read). */
  answersWithoutFields: number;
  /** The client's smoothed interval between request starts to the origin (ms), which sizes its quiet period. */
  intervalMs: number;
  /** When the client's latest request to the origin started; `undefined` before the first. */
  lastStartAt: number | undefined;
  /**
   * Whether the client has a pace towards the origin (a gap of more than 0 ms between two of its request starts):
   * before, a single throttle starts no quiet period (`SUSTAINED_THROTTLES`), so a client's first request, or
   * first burst, keeps rules 4 and 5.
   */
  paced: boolean;
  /** Throttles from the origin since its last answer that was not one (`SUSTAINED_THROTTLES`). */
  throttlesRunning: number;
  /** When the origin last throttled, which starts its quiet period. */
  throttledAt: number | undefined;
  /** Nothing new goes to the origin before this time (its quiet period, by the interval as it is now); 0: none. */
  quietUntil: number;
}

/**
 * Throttles running (no other answer between) that show the origin is not throttling a blip: they start a quiet
 * period even before the client has a pace, and it then holds the request a Retry-After told when, too. One 429
 * alone cannot tell a lone request's bad luck from a fleet's overload, so it leaves rules 4 and 5 as they are: the
 * lone request's retry goes when its backoff or Retry-After says. A second running is the overload's mark: a fleet
 * client that retried into it holds its retries and its other requests, and its 429s stop at two.
 */
const SUSTAINED_THROTTLES = 2;

/** Whether the quiet period holds a request at `now` (`toldWhen`: `OriginThrottles.take`'s). */
function heldQuiet(slots: OriginSlots, now: number, toldWhen: boolean): boolean {
  return now < slots.quietUntil && !(toldWhen && slots.throttlesRunning < SUSTAINED_THROTTLES);
}

interface Booking {
  origin: string;
  at: number;
}

/** The quiet period's settings, worked out once per client. */
interface QuietSettings {
  options: QuietPeriodOptions;
  /** The longest quiet period (quiet-period.ts). */
  ceilingMs: number;
  /** The longest gap between request starts counted, where each origin's interval starts (request-interval.ts). */
  longestGapMs: number;
}

function newSlots(quiet: QuietSettings): OriginSlots {
  return {
    rate: initialAdaptiveRate,
    quota: undefined,
    uncounted: 0,
    answersWithoutFields: 0,
    // Taken to be light until its own gaps show otherwise (request-interval.ts).
    intervalMs: quiet.longestGapMs,
    lastStartAt: undefined,
    paced: false,
    throttlesRunning: 0,
    throttledAt: undefined,
    quietUntil: 0,
  };
}

/**
 * A request started at `now`: the interval moves, and a start that shows the client heavier shortens a quiet
 * period in force; none lengthens it (requests were told when it ends, and an idle client is not the origin's
 * news).
 */
function noteStart(slots: OriginSlots, now: number, quiet: QuietSettings): void {
  const { lastStartAt } = slots;
  slots.intervalMs = intervalAfterStart(slots.intervalMs, lastStartAt, now, quiet.longestGapMs);
  // Requests started at the same instant (an app's burst at launch) are no pace yet: a gap of 0 says nothing of
  // how often the client sends. The interval still takes the gap.
  if (lastStartAt === undefined) slots.lastStartAt = now;
  else if (now > lastStartAt) {
    slots.paced = true;
    slots.lastStartAt = now;
  }
  if (now < slots.quietUntil)
    slots.quietUntil = Math.min(
      slots.quietUntil,
      quietUntil(slots.throttledAt, slots.intervalMs, quiet.options, quiet.ceilingMs),
    );
}

/**
 * The origin throttled at `at`: quiet from then, by the interval as it is, or to the end of one in force. Before
 * the client has a pace, only a throttle that makes `SUSTAINED_THROTTLES` running starts one.
 */
function noteThrottle(slots: OriginSlots, at: number, quiet: QuietSettings): void {
  slots.throttlesRunning++;
  if (!slots.paced && slots.throttlesRunning < SUSTAINED_THROTTLES) return;
  slots.throttledAt = Math.max(at, slots.throttledAt ?? at);
  slots.quietUntil = Math.max(
    slots.quietUntil,
    quietUntil(slots.throttledAt, slots.intervalMs, quiet.options, quiet.ceilingMs),
  );
}

/**
 * `options`: `policy.throttle`; `maxHoldMs`: `policy.retryAfter.maxHoldMs`, above which no quiet period lasts.
 */
export function createOriginThrottles(
  options: AdaptiveRateOptions & QuietPeriodOptions,
  maxHoldMs: number,
): OriginThrottles {
  const origins = new Map<string, OriginSlots>();
  const bookings = new Map<string, Booking>();
  const ceilingMs = quietCeilingMs(options, maxHoldMs);
  const settings: QuietSettings = {
    options,
    ceilingMs,
    longestGapMs: longestCountedGapMs(options, ceilingMs),
  };
  const quiet = options.quietIntervals > 0 && ceilingMs > 0;
  const slotsOf = (origin: string): OriginSlots => {
    let slots = origins.get(origin);
    if (slots === undefined) origins.set(origin, (slots = newSlots(settings)));
    return slots;
  };
  const release = (requestId: string) => {
    const booking = bookings.get(requestId);
    if (booking === undefined) return;
    bookings.delete(requestId);
    const slots = slotsOf(booking.origin);
    slots.rate = returnSendSlot(slots.rate);
  };
  return {
    start(origin, now) {
      if (quiet) noteStart(slotsOf(origin), now, settings);
    },
    take(origin, requestId, now, deadline, toldWhen = false) {
      const booking = bookings.get(requestId);
      // Nothing throttles an origin until it throttles or names a quota: every attempt asks, so no object is made.
      const known = origins.get(origin);
      // An origin not known yet has no quiet period.
      const quietHold = known !== undefined && heldQuiet(known, now, toldWhen);
      if (
        booking === undefined &&
        (known === undefined || (!known.rate.enabled && known.quota === undefined && !quietHold))
      )
        return undefined;
      if (booking !== undefined && booking.origin !== origin) release(requestId);
      const slots = slotsOf(origin);
      // The origin's own word first: a spent quota waits for its reset, booked slot or not.
      const quota = takeFromQuota(slots.quota, now);
      if (quota.waitUntil !== undefined) {
        slots.quota = quota.quota;
        return { holdUntil: quota.waitUntil, holdBy: 'quota' };
      }
      // Then the quiet period after a throttle: every request waits for its end, a booked slot too.
      if (quietHold) return { holdUntil: slots.quietUntil, holdBy: 'quiet' };
      if (booking !== undefined && booking.origin === origin) {
        if (now < booking.at) return { holdUntil: booking.at, holdBy: 'rate' };
        bookings.delete(requestId);
        slots.quota = quota.quota;
        return undefined;
      }
      const taken = takeSendSlot(slots.rate, now);
      if (taken.sendAt <= now) {
        slots.rate = taken.state;
        slots.quota = quota.quota;
        return undefined;
      }
      // A wait the request cannot afford books nothing: it ends without sending (`throttled`).
      if (taken.sendAt < deadline) {
        slots.rate = taken.state;
        bookings.set(requestId, { origin, at: taken.sendAt });
      }
      return { holdUntil: taken.sendAt, holdBy: 'rate' };
    },
    observe(origin, status, headers, at) {
      const slots = slotsOf(origin);
      const throttled = status === 429;
      if (!throttled && changesOnlyItsCount(slots.rate, at)) slots.uncounted++;
      else {
        slots.rate = noteAnswer(slots.rate, at, throttled, options, slots.uncounted + 1);
        slots.uncounted = 0;
      }
      const fields = readsRateLimitFields(slots.answersWithoutFields, status)
        ? parseRateLimitFields(headers, at)
        : undefined;
      if (fields === undefined) slots.answersWithoutFields++;
      else {
        slots.answersWithoutFields = 0;
        slots.quota = mergeQuota(slots.quota, fields, at);
      }
      if (!quiet) return;
      if (isThrottle(status, fields)) noteThrottle(slots, at, settings);
      else slots.throttlesRunning = 0;
    },
    release,
  };
}
