import { describe, expect, it } from 'vitest';
import {
  changesOnlyItsCount,
  initialAdaptiveRate,
  noteAnswer,
  returnSendSlot,
  takeSendSlot,
  type AdaptiveRate,
} from '../../src/policy/adaptive-rate.js';

// Expected values worked out by hand from smithy-typescript's DefaultRateLimiter (beta 0.7, C 0.4, smoothing
// 0.8, half-second buckets): the arithmetic is written beside each.
const options = { beta: 0.7, minRatePerSecond: 0.5 };

/** Answers at each time (ms), none throttled, then one throttled. */
function answered(times: readonly number[], throttledAt: number): AdaptiveRate {
  let state: AdaptiveRate = initialAdaptiveRate;
  for (const at of times) state = noteAnswer(state, at, false, options);
  return noteAnswer(state, throttledAt, true, options);
}

describe('adaptive send rate', () => {
  it('sends at once and measures the rate until the origin first throttles', () => {
    expect(takeSendSlot(initialAdaptiveRate, 5)).toEqual({ state: initialAdaptiveRate, sendAt: 5 });
    const state = [100, 200, 300, 400, 600].reduce<AdaptiveRate>(
      (s, at) => noteAnswer(s, at, false, options),
      initialAdaptiveRate,
    );
    // Five answers in the bucket [0, 0.5 s): 5 / 0.5 = 10 a second, smoothed 10 * 0.8 = 8.
    expect(state).toMatchObject({ enabled: false, measuredRate: 8, bucketS: 0.5, answers: 0 });
    expect(takeSendSlot(state, 650).sendAt).toBe(650);
  });

  it('drops to beta times the measured rate at a 429, then books slots 1 / rate apart', () => {
    const state = answered([100, 200, 300, 400, 600], 700);
    // Rate at the throttle 8 a second; 8 * 0.7 = 5.6 tokens a second, a bucket of 5.6 that starts with one token.
    expect(state).toMatchObject({
      enabled: true,
      fillRate: 5.6,
      maxCapacity: 5.6,
      capacity: 1,
      lastMaxRate: 8,
    });
    // K = cbrt(8 * 0.3 / 0.4) = cbrt(6).
    expect(state.timeWindowS).toBeCloseTo(1.81712, 5);
    // The one token goes at once (the retry of the request the 429 answered).
    const now = takeSendSlot(state, 700);
    expect(now.sendAt).toBe(700);
    expect(now.state.capacity).toBeCloseTo(0, 10);
    const first = takeSendSlot(now.state, 700);
    // A whole token to go takes 1 / 5.6 s = 178.57 ms: 879 (rounded up).
    expect(first.sendAt).toBe(879);
    const second = takeSendSlot(first.state, 700);
    // 2 tokens: 357.14 ms: 1058.
    expect(second.sendAt).toBe(1058);
    expect(second.state.capacity).toBeCloseTo(-2, 10);
    // A booked slot given back returns its token.
    expect(returnSendSlot(second.state).capacity).toBeCloseTo(-1, 10);
  });

  it('climbs back along the CUBIC curve as the origin answers, capped at twice the measured rate', () => {
    const throttled = answered([100, 200, 300, 400, 600], 700);
    // Seven tokens taken at 700, one given back: 1 - 6 = -5 left.
    let booked = throttled;
    for (let i = 0; i < 7; i++) booked = takeSendSlot(booked, 700).state;
    const after = noteAnswer(returnSendSlot(booked), 1_000, false, options);
    // Bucket [0.5, 1): 2 answers / 0.5 s = 4, smoothed 4 * 0.8 + 8 * 0.2 = 4.8.
    expect(after.measuredRate).toBeCloseTo(4.8, 10);
    // 0.4 * (1.0 - 0.7 - cbrt(6))^3 + 8 = 6.6032, under 2 * 4.8.
    expect(after.fillRate).toBeCloseTo(6.60324, 5);
    // Filled 0.3 s at 5.6 a second from -5: -3.32.
    expect(after.capacity).toBeCloseTo(-3.32, 10);
  });

  it('takes the 429s within half a second of a decrease as the same congestion event: no second decrease', () => {
    // The first 429 at 500 ms: 2.24 a second (as below); the attempts already on their way answer 429 too.
    const state = noteAnswer(noteAnswer(initialAdaptiveRate, 0, false, options), 500, true, options);
    const again = [600, 750, 999].reduce<AdaptiveRate>((s, at) => noteAnswer(s, at, true, options), state);
    expect(again.fillRate).toBeCloseTo(2.24, 10);
    expect(again.lastThrottleS).toBe(0.5);
    // Half a second after the decrease, a 429 is news: 2.24 * 0.7 = 1.568.
    expect(noteAnswer(again, 1_000, true, options).fillRate).toBeCloseTo(1.568, 10);
  });

  it('never goes below minRatePerSecond', () => {
    // One answer, then a 429 in the next bucket (which counts it too): 2 / 0.5 = 4, smoothed 3.2; 3.2 * 0.7 = 2.24.
    const state = noteAnswer(noteAnswer(initialAdaptiveRate, 0, false, options), 500, true, options);
    expect(state.fillRate).toBeCloseTo(2.24, 10);
    // Throttled again and again, each a half-second bucket after the last decrease; the measured rate (one answer
    // a bucket: 2 a second, smoothed: 2.24, 2.048, 2.0096, ...) stays above the fill rate, which drops by 0.7.
    let next = state;
    const fills: number[] = [];
    for (const at of [1_000, 1_500, 2_000, 2_500, 3_000]) {
      next = noteAnswer(next, at, true, options);
      fills.push(next.fillRate);
    }
    // 2.24 * 0.7 = 1.568, 1.0976, 0.76832, 0.537824; then 0.3764768, under the floor: 0.5.
    expect(fills.slice(0, 4).map((rate) => Number(rate.toFixed(6)))).toEqual([
      1.568, 1.0976, 0.76832, 0.537824,
    ]);
    expect(fills[4]).toBe(0.5);
    // The bucket still holds one token at least.
    expect(next.maxCapacity).toBe(1);
  });
});

describe('answers counted by their owner (changesOnlyItsCount)', () => {
  it('noting a count at once equals noting each answer, across buckets and a throttle', () => {
    // Answers at these times (ms), the last a 429: buckets [0, 0.5), [0.5, 1), [1, 1.5).
    const times = [0, 100, 200, 499, 500, 700, 900, 1_000, 1_200];
    let each = initialAdaptiveRate as AdaptiveRate;
    for (const at of times) each = noteAnswer(each, at, false, options);
    each = noteAnswer(each, 1_300, true, options);

    let folded = initialAdaptiveRate as AdaptiveRate;
    let uncounted = 0;
    const counted: boolean[] = [];
    for (const at of times) {
      const onlyCount = changesOnlyItsCount(folded, at);
      counted.push(onlyCount);
      if (onlyCount) uncounted++;
      else {
        folded = noteAnswer(folded, at, false, options, uncounted + 1);
        uncounted = 0;
      }
    }
    folded = noteAnswer(folded, 1_300, true, options, uncounted + 1);
    // Only the answers that opened a new bucket were noted: 500 and 1,000 ms.
    expect(counted).toEqual([true, true, true, true, false, true, true, false, true]);
    expect(folded).toEqual(each);
  });

  it('is false once the bucket is on: every answer then moves the rate', () => {
    const on = noteAnswer(initialAdaptiveRate, 0, true, options);
    expect(on.enabled).toBe(true);
    expect(changesOnlyItsCount(on, 100)).toBe(false);
  });
});
