/**
 * The only source of time in failwise. It is xstate's `Clock` (setTimeout/clearTimeout) plus `now()`,
 * so the same object can be handed to `createActor(machine, { clock })` and read by the runtime.
 * Tests pass `simulatedClock()`; nothing in failwise reads `Date.now()` or a global timer directly.
 */
export interface Clock {
  /** Milliseconds on this clock's time line (epoch ms for `systemClock`). */
  now(): number;
  setTimeout(fn: (...args: unknown[]) => void, timeoutMs: number): unknown;
  clearTimeout(handle: unknown): void;
  /**
   * Milliseconds on a monotonic time line, which no wall-clock correction moves (`performance.now()`), if the
   * clock has one. The lean executor keeps its delays in one queue on one host timer on such a clock
   * (src/engine/timer-queue.ts); on a clock without it (a simulated one) each delay is a timer of the clock.
   */
  monotonicNow?(): number;
}
