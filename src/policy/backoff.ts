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
  backoff: Policy['backoff'],
  retry: number,
  previousDelayMs: number | undefined,
  random: () => number,
): number {
  const { initialMs, maxMs, jitter } = backoff;
  const r = unitInterval(random());
  let delay: number;
  switch (jitter) {
    case 'decorrelated': {
      // The previous wait came from here, so it is at most maxMs; clamping keeps a stray value from overflowing.
      const previous = clamp(previousDelayMs ?? initialMs, 0, maxMs);
      delay = Math.min(maxMs, Math.max(initialMs, initialMs + r * (3 * previous - initialMs)));
      break;
    }
    case 'full':
      delay = r * baseDelay(backoff, retry);
      break;
    case 'equal': {
      const base = baseDelay(backoff, retry);
      delay = base / 2 + (r * base) / 2;
      break;
    }
    case 'none':
      delay = baseDelay(backoff, retry);
      break;
  }
  return clamp(Math.floor(Math.min(delay, maxMs)), 0, maxMs);
}

/** `min(maxMs, initialMs * multiplier^(retry - 1))`, without NaN: 0 * Infinity is 0 here, and 1^Infinity is 1. */
function baseDelay({ initialMs, maxMs, multiplier }: Policy['backoff'], retry: number): number {
  const steps = retry > 1 ? retry - 1 : 0;
  if (initialMs === 0 || steps === 0 || multiplier === 1) return Math.min(maxMs, initialMs);
  const growth = multiplier ** steps;
  return Number.isNaN(growth) ? maxMs : Math.min(maxMs, initialMs * growth);
}

function unitInterval(value: number): number {
  return Number.isNaN(value) ? 0 : clamp(value, 0, 1);
}

function clamp(value: number, low: number, high: number): number {
  return Number.isNaN(value) ? low : Math.min(high, Math.max(low, value));
}
