/**
 * How often the client itself starts requests to one origin: a smoothed interval between request starts (an
 * exponentially weighted moving average of the gaps), which sizes its quiet period after a throttle
 * (quiet-period.ts). Request starts, not attempts: retries come fastest exactly when the origin throttles, and
 * counted they would make a light client look heavy. Pure: times are `clock.now()` values passed in; the client
 * keeps an interval and its last start per origin.
 *
 * - It starts at the longest gap counted (`longestGapMs`): a client is taken to be light until its own gaps show
 *   otherwise, so a throttle soon after its second start keeps it quiet for nearly the longest
 *   quiet period. A heavy client's gaps bring it down within a few dozen starts (each moves it by `GAP_WEIGHT`
 *   of the difference: after 20 gaps of 50 ms, 7.5 s is 0.07 s); a light client's few starts leave it long.
 *   Taking the first gap as the interval instead lets one short gap between a light client's first two
 *   requests (a fifth of Poisson gaps are under a quarter of the mean) make it look heavy.
 * - A gap counts at most `longestGapMs` (the quiet period's ceiling over its multiple: a longer interval gives
 *   the ceiling anyway). So a phone's burst then a long idle moves the interval by a quarter of that longest
 *   gap, not by the hours it slept: after the burst it is near 0 (a heavy client), and each idle gap brings it
 *   a quarter of the way back to the longest.
 */

/** The weight of the newest gap: about the last four gaps count. */
export const GAP_WEIGHT = 0.25;

/**
 * The interval after a request started at `now`, given the interval before (`longestGapMs` before any gap) and
 * when the request before it started (`undefined`: none did, so there is no gap yet). A gap longer than
 * `longestGapMs` counts as that, and a start reported before the last as a gap of 0. Its owner keeps the latest
 * start, `Math.max(now, lastStartAt)`; a number, not a new state object, as it runs once per request.
 */
export function intervalAfterStart(
  intervalMs: number,
  lastStartAt: number | undefined,
  now: number,
  longestGapMs: number,
): number {
  if (lastStartAt === undefined) return intervalMs;
  // Comparisons rather than Math.min/max: this runs for every request, and on Hermes each is a native call.
  const elapsed = now - lastStartAt;
  const gap = elapsed < 0 ? 0 : elapsed > longestGapMs ? longestGapMs : elapsed;
  return intervalMs + GAP_WEIGHT * (gap - intervalMs);
}
