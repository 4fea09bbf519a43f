import type { Failure, FailReason } from './failure.js';

/** How every request ends. `client.request` resolves with one; it never rejects for a network or server failure. */
export type Outcome =
  | {
      status: 'succeeded';
      response: Response;
      origin: string;
      attempts: number;
      elapsedMs: number;
      /** Served from the cache (`lifetime: 'cached'`) because the network path failed or a refresh runs. */
      stale?: boolean;
      /** How old the cached response is, when `stale`. */
      ageMs?: number;
      /** The write's outcome was unknown and `reconcile` found it applied. */
      reconciled?: boolean;
    }
  | {
      status: 'failed';
      reason: FailReason;
      failure?: Failure;
      /** The last response the server gave, so an app can show the server's own error message. */
      response?: Response;
      origin?: string;
      attempts: number;
      elapsedMs: number;
      /**
       * For `retry-after-exceeds-budget` because of a server hold on `origin`, or `throttled`: when the hold
       * or the send slot ends, on the client's clock; sending again before then is pointless.
       */
      holdUntil?: number;
      /** A durable request's entry, dead-lettered in the outbox by the time this outcome comes (`outbox.retry(entryId)`). */
      entryId?: string;
    }
  | { status: 'deferred'; entryId: string; reason: FailReason | 'durable' };
