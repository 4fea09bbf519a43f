/**
 * A sliding time window of outcomes, for `policy.health.failureRatio`. Kept as ten buckets of a tenth of the
 * window each (as opossum's rolling buckets), so memory and work per outcome stay constant however busy the
 * origin is; the window slides a bucket at a time. Values are immutable: each call returns a new window, as
 * machine context requires.
 */
export interface FailureWindow {
  /** Oldest first; only buckets that hold outcomes. */
  readonly buckets: readonly WindowBucket[];
}

interface WindowBucket {
  /** Start of the bucket, a multiple of the bucket width on the clock's time line. */
  readonly start: number;
  readonly total: number;
  readonly failures: number;
}

const BUCKETS = 10;

export const emptyWindow: FailureWindow = { buckets: [] };

const bucketWidth = (windowMs: number) => Math.max(1, Math.ceil(windowMs / BUCKETS));

/** The buckets still inside the window ending at `now`. */
function live(window: FailureWindow, windowMs: number, now: number): readonly WindowBucket[] {
  const oldest = now - windowMs;
  const width = bucketWidth(windowMs);
  // A bucket counts while any part of it is inside the window: at most one bucket width of extra history. A loop,
  // not `filter`: every attempt's outcome comes here, and a callback per bucket costs an engine without a JIT.
  const kept: WindowBucket[] = [];
  const { buckets } = window;
  for (let i = 0; i < buckets.length; i++) if (buckets[i]!.start + width > oldest) kept.push(buckets[i]!);
  return kept;
}

/** The window with one more outcome at `now`. */
export function recordOutcome(
  window: FailureWindow,
  windowMs: number,
  now: number,
  failed: boolean,
): FailureWindow {
  const width = bucketWidth(windowMs);
  const start = Math.floor(now / width) * width;
  // live() filters into a new array, which this call may change: no second copy per outcome.
  const buckets = live(window, windowMs, now) as WindowBucket[];
  const last = buckets[buckets.length - 1];
  const failures = failed ? 1 : 0;
  if (last?.start === start) {
    buckets[buckets.length - 1] = { start, total: last.total + 1, failures: last.failures + failures };
  } else {
    buckets.push({ start, total: 1, failures });
  }
  return { buckets };
}

/** Outcomes and failures in the window ending at `now`. */
export function windowCounts(
  window: FailureWindow,
  windowMs: number,
  now: number,
): { total: number; failures: number } {
  let total = 0;
  let failures = 0;
  const buckets = live(window, windowMs, now);
  for (let i = 0; i < buckets.length; i++) {
    total += buckets[i]!.total;
    failures += buckets[i]!.failures;
  }
  return { total, failures };
}
