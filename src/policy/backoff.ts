import type { Policy } from './policy.js';

/**
 * How long to wait before retry number `retry` (1 for the wait after the first attempt), in whole ms.
 *
 * The base grows exponentially and stops at `maxMs`: `base = min(maxMs, initialMs * multiplier^(retry - 1))`
 * (a power too large for a number counts as `maxMs`). The jitter then spreads clients apart so that they do
 * not all come back at once (see AWS's "Exponential Backoff And Jitter"):
 *
 * - `full`: uniform in [0, base).
 * - `equal`: base / 2 plus uniform in [0, base / 2).
 * - `none`: base.
 * - `decorrelated`: AWS's "decorrelated jitter", `min(maxMs, initialMs + random * (3 * previous - initialMs))`,
 *   where `previous` is the last wait (`initialMs` before the first), and at least `initialMs` when `maxMs`
 *   allows. It ignores `retry` and `multiplier`: each wait grows from the last one.
 *
 * The result is rounded down to an integer and always lies in [0, maxMs]. Pure: `random` (returning a
 * number in [0, 1), like `Math.random`) is the only source of chance; a value outside it, or NaN, is
 * clamped into [0, 1].
 * Retry-After is not applied here: `planRetryWait` waits for the longer of the two.
 *
 * @param previousDelayMs The wait this function returned for the previous retry; `undefined` before the first.
 */
export function nextBackoff(
  { initialMs, maxMs, multiplier, jitter }: Policy['backoff'],
  retry: number,
  previousDelayMs: number | undefined,
  random: () => number,
): number {
  const r = clamp(random(), 1);
  const steps = retry > 1 ? retry - 1 : 0;
  // min(maxMs, initialMs * multiplier^steps), without NaN: 0 * Infinity is 0 here, 1^Infinity is 1, and a power
  // too large for a number (or NaN) counts as maxMs.
  const base = Math.min(
    maxMs,
    initialMs && steps && multiplier !== 1 ? initialMs * multiplier ** steps || maxMs : initialMs,
  );
  // decorrelated: the previous wait came from here, so it is at most maxMs; clamping keeps a stray value from
  // overflowing.
  const delay =
    jitter === 'decorrelated'
      ? Math.max(initialMs, initialMs + r * (3 * clamp(previousDelayMs ?? initialMs, maxMs) - initialMs))
      : jitter === 'full'
        ? r * base
        : jitter === 'equal'
          ? base / 2 + (r * base) / 2
          : base;
  return Math.floor(clamp(delay, maxMs));
}

/** `value` within [0, high]; NaN is 0. */
function clamp(value: number, high: number): number {
  return Math.min(high, Math.max(0, value)) || 0;
}
