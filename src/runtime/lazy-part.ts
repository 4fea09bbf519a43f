import type { Clock } from '../clock/clock.js';
import { FailwiseError } from '../errors/failwise-error.js';

/**
 * A part of the client that is loaded with `import()` when it is first needed (durable work, cached reads):
 * bundlers put it in a chunk of its own, so an app that never needs it never loads it (docs/design.md#bundle-budget).
 */
export interface LazyPart<T> {
  /**
   * The part: loads it now unless it is loaded or loading. A failed load is tried again by the next call;
   * after `close()`, a part that was never loaded rejects.
   */
  get(): Promise<T>;
  /** `get()` for its effect: starts loading, a failure is left for the next `get()` to report. */
  start(): void;
  /** Whether it is loaded or loading. */
  started(): boolean;
  /** Loads nothing more, then resolves with the part (once a load in progress ends), `undefined` if none. */
  close(): Promise<T | undefined>;
}

/**
 * `hold`: a clock to keep at its current instant while the part loads (the app's own clock, e.g. a simulated
 * one). Loading a module takes real event-loop turns that a driver of simulated time cannot see: with nothing
 * else armed it would see no work left, or move time on to the next timer (a request's budget) before the
 * request it loads for has begun. A 0 ms timer stays armed on `hold` until the load ends, so the driver fires it
 * again and again at the same instant instead: loading takes no simulated time. (The system clock needs none.)
 */
export function lazyPart<T>(load: () => Promise<T>, hold?: Clock): LazyPart<T> {
  let loading: Promise<T> | undefined;
  let closed = false;
  const get = (): Promise<T> => {
    if (loading) return loading;
    if (closed) return Promise.reject(new FailwiseError('failwise: this client is closed'));
    let loaded = false;
    let timer: unknown;
    const keep = () => {
      if (!loaded) timer = hold?.setTimeout(keep, 0);
    };
    const release = () => {
      loaded = true;
      if (hold) hold.clearTimeout(timer);
    };
    keep();
    return (loading = load().then(
      (part) => (release(), part),
      (error: unknown) => {
        release();
        loading = undefined;
        throw error;
      },
    ));
  };
  return {
    get,
    start: () => void get().catch(() => undefined),
    started: () => loading !== undefined,
    close() {
      closed = true;
      return (loading ?? Promise.resolve(undefined)).catch(() => undefined);
    },
  };
}
