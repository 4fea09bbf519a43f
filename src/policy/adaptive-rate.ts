/**
 * One origin's adaptive send rate, after AWS SDKs' adaptive retry mode (smithy-typescript's
 * `DefaultRateLimiter`): a token bucket that stays off until the origin first throttles (a 429), then fills at
 * a rate that drops to `beta` times the rate measured at a throttle and climbs back along a CUBIC curve as
 * the origin answers without throttling. Unlike the SDKs' bucket, throttles within half a second of a decrease
 * count as one (CUBIC's one decrease per window), and the bucket starts with one token when it switches on.
 * Pure: each function takes the state and a `clock.now()` value and returns a new state; the client keeps one
 * state per origin.
 */

/** `policy.throttle`: how far the rate drops at a throttle, and the slowest it may go. */
export interface AdaptiveRateOptions {
  /** The rate after a throttle, as a share of the rate measured then (CUBIC's multiplicative decrease). */
  beta: number;
  /** The slowest send rate, in attempts a second. */
  minRatePerSecond: number;
}

export interface AdaptiveRate {
  /** Switched on by the first throttle: until then every attempt goes at once. */
  enabled: boolean;
  /** Tokens in the bucket; below 1 an attempt waits, below 0 attempts are booked ahead of time. */
  capacity: number;
  maxCapacity: number;
  /** Tokens a second. */
  fillRate: number;
  /** When the bucket was last filled (ms); `undefined` before the first fill. */
  filledAt: number | undefined;
  /** The rate at the last throttle (attempts a second): CUBIC's `W_max`. */
  lastMaxRate: number;
  /** When the origin last throttled (seconds). */
  lastThrottleS: number;
  /** CUBIC's `K`: the seconds after a throttle at which the rate is back at `lastMaxRate`. */
  timeWindowS: number;
  /** Answers a second, smoothed over half-second buckets. */
  measuredRate: number;
  /** Answers in the current half-second bucket. */
  answers: number;
  /** The start of the current half-second bucket (seconds). */
  bucketS: number;
}

/** CUBIC's scaling constant `C`, as the AWS SDKs set it. */
const SCALE = 0.4;
/** The weight of the newest half second in the measured rate. */
const SMOOTH = 0.8;
/** The bucket holds at least one token, so that an attempt can always start at some point. */
const MIN_CAPACITY = 1;
/** Throttles this soon after the last decrease (seconds) are the same congestion event: one measuring bucket. */
const DECREASE_WINDOW_S = 0.5;

export const initialAdaptiveRate: Readonly<AdaptiveRate> = Object.freeze({
  enabled: false,
  capacity: 0,
  maxCapacity: MIN_CAPACITY,
  fillRate: 0,
  filledAt: undefined,
  lastMaxRate: 0,
  lastThrottleS: 0,
  timeWindowS: 0,
  measuredRate: 0,
  answers: 0,
  bucketS: 0,
});

/** The bucket filled up to `now`. */
function filled(state: AdaptiveRate, now: number): AdaptiveRate {
  if (state.filledAt === undefined) return { ...state, filledAt: now };
  const capacity = Math.min(
    state.maxCapacity,
    state.capacity + (Math.max(0, now - state.filledAt) / 1000) * state.fillRate,
  );
  return { ...state, capacity, filledAt: Math.max(now, state.filledAt) };
}

/**
 * When an attempt asked for at `now` may start, and the state with its token taken: at once while the bucket is
 * off or has a token, else when the bucket will have filled to one. Attempts asked for while the bucket is empty
 * are booked one after another, `1 / fillRate` seconds apart.
 */
export function takeSendSlot(state: AdaptiveRate, now: number): { state: AdaptiveRate; sendAt: number } {
  if (!state.enabled) return { state, sendAt: now };
  const bucket = filled(state, now);
  // Whole ms, rounded up; less a nanosecond, so that a wait of exactly 1900 ms in floating point stays 1900.
  const sendAt =
    bucket.capacity >= 1 ? now : now + Math.ceil(((1 - bucket.capacity) / bucket.fillRate) * 1000 - 1e-6);
  return { state: { ...bucket, capacity: bucket.capacity - 1 }, sendAt };
}

/** A slot taken and not used (its request ended first): its token goes back. */
export function returnSendSlot(state: AdaptiveRate): AdaptiveRate {
  return state.enabled ? { ...state, capacity: Math.min(state.maxCapacity, state.capacity + 1) } : state;
}

/** The answer rate, counted in half-second buckets and smoothed. */
function measured(state: AdaptiveRate, nowS: number, count: number): AdaptiveRate {
  const bucketS = Math.floor(nowS * 2) / 2;
  const answers = state.answers + count;
  if (!(bucketS > state.bucketS)) return { ...state, answers };
  const rate = answers / (bucketS - state.bucketS);
  return {
    ...state,
    answers: 0,
    bucketS,
    measuredRate: rate * SMOOTH + state.measuredRate * (1 - SMOOTH),
  };
}

/** CUBIC's `K` for a window that peaked at `maxRate`. */
const timeWindowOf = (maxRate: number, beta: number) => Math.cbrt((maxRate * (1 - beta)) / SCALE);

/**
 * The state after the origin answered at `now`: `throttled` (a 429) drops the rate to `beta` times the rate
 * measured (or in force), and switches the bucket on; any other answer lets the rate climb back along the CUBIC
 * curve, never past twice the rate measured. `answers` counts this answer and any that came before it in the same
 * half-second bucket and were not noted (`changesOnlyItsCount`).
 */
export function noteAnswer(
  state: AdaptiveRate,
  now: number,
  throttled: boolean,
  options: AdaptiveRateOptions,
  answers = 1,
): AdaptiveRate {
  const nowS = now / 1000;
  let next = measured(state, nowS, answers);
  let rate: number;
  // One decrease per congestion event, as CUBIC decreases once per window (RFC 9438): the 429s of attempts already
  // on their way when the rate dropped say nothing new, and each taken as a throttle of its own would cut the rate
  // far below what the origin admits.
  if (throttled && next.enabled && nowS - next.lastThrottleS < DECREASE_WINDOW_S) return next;
  if (throttled) {
    const rateAtThrottle = next.enabled ? Math.min(next.measuredRate, next.fillRate) : next.measuredRate;
    next = {
      ...next,
      lastMaxRate: rateAtThrottle,
      timeWindowS: timeWindowOf(rateAtThrottle, options.beta),
      lastThrottleS: nowS,
      enabled: true,
    };
    rate = rateAtThrottle * options.beta;
  } else {
    if (!next.enabled) return next;
    next = { ...next, timeWindowS: timeWindowOf(next.lastMaxRate, options.beta) };
    rate = SCALE * (nowS - next.lastThrottleS - next.timeWindowS) ** 3 + next.lastMaxRate;
  }
  const newRate = Math.min(rate, 2 * next.measuredRate);
  const bucket = filled(next, now);
  const fillRate = Math.max(newRate, options.minRatePerSecond);
  const maxCapacity = Math.max(newRate, MIN_CAPACITY);
  // Switched on, the bucket starts with one token: the request the 429 answered retries after its backoff as
  // before, and the attempts after it are paced (a full bucket would let a burst go out into the same refusal).
  const capacity = state.enabled ? Math.min(bucket.capacity, maxCapacity) : MIN_CAPACITY;
  return { ...bucket, fillRate, maxCapacity, capacity };
}

/**
 * Whether an answer at `now` that is not a throttle would change nothing but the count of answers in the current
 * half-second bucket: the bucket is off and `now` is still in that bucket. Its owner may count such answers
 * itself and pass the count to the next `noteAnswer`, which then does exactly what noting each would have done.
 */
export function changesOnlyItsCount(state: AdaptiveRate, now: number): boolean {
  return !state.enabled && !(Math.floor((now / 1000) * 2) / 2 > state.bucketS);
}
