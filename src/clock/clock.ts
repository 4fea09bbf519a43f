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
}
