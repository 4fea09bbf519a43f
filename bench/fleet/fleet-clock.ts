import type { Clock } from '../../src/clock/clock.js';

/**
 * The fleet's one simulated clock, shared by every client, origin and baseline of a run. It is
 * `simulatedClock()`'s model (time moves only when told to, each timer fires at its own due time, promises
 * settle before time moves on) with a binary heap of timers: `simulatedClock()` looks for the next timer with a
 * scan of every armed one, which is fine for a test's dozen but quadratic for a thousand clients' thousands.
 * Timers due at the same millisecond fire in the order they were armed, then promises settle once.
 */
export interface FleetClock extends Clock {
  /** Runs every timer due up to `end`, in order, then sets the time to `end`. */
  runUntil(end: number): Promise<void>;
  /** Timers armed and not yet fired or cleared. */
  pending(): number;
}

interface Timer {
  due: number;
  seq: number;
  fn: ((...args: unknown[]) => void) | undefined;
}

/** Lets every queued promise reaction run: a macrotask runs only once the microtask queue is empty. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Lets promise chains up to `TICKS` reactions deep run, without leaving the microtask queue. A macrotask per
 * batch (`settle`) costs tens of microseconds on a busy machine, and a run has hundreds of thousands of batches;
 * the transport's answers and the clients' reactions to them are chains of a few dozen reactions at most (a
 * deeper one would only go on at the next batch). Every `SETTLE_EVERY` batches, a full settle all the same.
 */
const TICKS = 16;
const SETTLE_EVERY = 1024;
async function drainMicrotasks(): Promise<void> {
  for (let i = 0; i < TICKS; i++) await Promise.resolve();
}

export function fleetClock(): FleetClock {
  let now = 0;
  let seq = 0;
  let live = 0;
  const heap: Timer[] = [];
  const before = (a: Timer, b: Timer) => a.due < b.due || (a.due === b.due && a.seq < b.seq);
  const push = (timer: Timer) => {
    heap.push(timer);
    for (let i = heap.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  };
  const pop = (): Timer => {
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  };
  return {
    now: () => now,
    setTimeout(fn, timeoutMs) {
      const timer: Timer = { due: now + (timeoutMs > 0 ? timeoutMs : 0), seq: ++seq, fn };
      push(timer);
      live += 1;
      return timer;
    },
    clearTimeout(handle) {
      const timer = handle as Timer | undefined;
      if (timer?.fn === undefined) return;
      timer.fn = undefined;
      live -= 1;
    },
    pending: () => live,
    async runUntil(end) {
      await settle();
      let batches = 0;
      while (heap.length > 0 && heap[0]!.due <= end) {
        const due = heap[0]!.due;
        now = due;
        while (heap.length > 0 && heap[0]!.due === due) {
          const timer = pop();
          const fn = timer.fn;
          if (fn === undefined) continue;
          timer.fn = undefined;
          live -= 1;
          fn();
        }
        if (++batches % SETTLE_EVERY === 0) await settle();
        else await drainMicrotasks();
      }
      now = Math.max(now, end);
      await settle();
    },
  };
}
