import { ArgumentError } from '../errors/argument-error.js';
import { describeValue } from '../policy/describe-value.js';

/** What `client.outbox.drain()` takes. */
export interface DrainOptions {
  /**
   * How long drain may start sends, in ms. Sends in flight when it is spent are awaited, each within its
   * request's budget (`policy.budgetMs`, or a route's or the entry's own), so a task the OS ends at a fixed time
   * passes a limit that leaves room for one send, and for `client.close()` after it. The default fits the
   * shortest common window: iOS gives a `BGAppRefreshTask` about 30 s, and 15 s plus a 10 s budget leaves 5 s.
   * A service worker's `sync` event has minutes (`failwise/service-worker` passes its own), an
   * expo-background-task or WorkManager job about 10 minutes.
   * @default 15000
   */
  timeLimitMs?: number | undefined;
}

/**
 * The longest a host timer waits (2^31 - 1 ms). Written here rather than imported from the durable backoff, which
 * would bring that module into the bundle the client loads up front.
 */
const MAX_LIMIT_MS = 2_147_483_647;

/** `DrainOptions.timeLimitMs`'s default. */
export const DEFAULT_DRAIN_LIMIT_MS = 15_000;

/**
 * The time limit `options` asks for, checked: throws `ArgumentError` naming `options.timeLimitMs` unless it is a
 * whole number of ms from 1 to the longest a host timer waits (2^31 - 1).
 */
export function drainLimitOf(options: DrainOptions | undefined): number {
  const where = 'client.outbox.drain';
  if (options === undefined) return DEFAULT_DRAIN_LIMIT_MS;
  if (typeof options !== 'object' || options === null)
    throw new ArgumentError(where, 'options', `expected an object, got ${describeValue(options)}`);
  const limit = options.timeLimitMs;
  if (limit === undefined) return DEFAULT_DRAIN_LIMIT_MS;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT_MS)
    throw new ArgumentError(
      where,
      'options.timeLimitMs',
      `expected a whole number of ms from 1 to ${MAX_LIMIT_MS}, got ${describeValue(limit)}`,
    );
  return limit;
}
