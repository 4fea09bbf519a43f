/** How exponential backoff is randomised; see docs/policy.md and src/policy/backoff.ts. */
export type Jitter = 'full' | 'equal' | 'decorrelated' | 'none';

/**
 * The complete policy: what `definePolicy` returns (frozen), and what a client and each request run by.
 * Every option has one default, given here with `@default` and kept in src/policy/defaults.ts. Every
 * duration is a whole number of ms, at most 2147483647 (the longest delay a timer can wait). docs/policy.md
 * has the rules and examples.
 */
export interface Policy {
  attempts: {
    /**
     * Attempts per request, counted across layers: the first one, retries, the attempt after an auth
     * refresh, and attempts a transport reports it made itself.
     * @default 3
     */
    max: number;
  };
  /**
   * The time budget of one request, from `client.request` to its outcome. A request can override it
   * with `deadlineMs`.
   * @default 10000
   */
  budgetMs: number;
  timeouts: {
    /**
     * How long one attempt may take, from sending to the whole response body. Must not exceed `budgetMs`;
     * when left out, it is at most the `budgetMs` you set.
     * @default 5000
     */
    attemptMs: number;
    /**
     * How long a transport may wait for a connection (`connect-timeout`). Must not exceed `attemptMs`;
     * when left out, it is at most the `attemptMs` in effect.
     * @default 3000
     */
    connectMs: number;
  };
  backoff: {
    /**
     * The base of the first wait: retry n waits about `initialMs * multiplier^(n-1)`, jittered. Must not
     * exceed `maxMs`; when left out, it is at most the `maxMs` you set.
     * @default 200
     */
    initialMs: number;
    /**
     * No wait is ever longer (Retry-After aside). Must be >= `initialMs`.
     * @default 5000
     */
    maxMs: number;
    /**
     * The growth factor between waits.
     * @default 2
     */
    multiplier: number;
    /**
     * `full` (AWS's recommendation: uniform in [0, d]), `equal` ([d/2, d]), `decorrelated`
     * (uniform in [initialMs, 3 * previous wait]) or `none`.
     * @default 'full'
     */
    jitter: Jitter;
  };
  /**
   * HTTP statuses that may be retried (subject to write safety). Any other status ends the request, except a
   * 409 on a request with an idempotency key (still being processed: sent again unchanged). Integers from 400
   * to 599; 400, 401 and 422 are refused, since they are never retried (see docs/failure-classes.md).
   * @default [408, 429, 502, 503, 504]
   */
  retryableStatuses: readonly number[];
  retryAfter: {
    /**
     * The longest Retry-After failwise will wait for. A longer one ends an interactive request with
     * `retry-after-exceeds-budget` (the server asked for more than this client will give) and defers durable
     * work; failwise never waits less than the server asked. `0` means never waiting for a Retry-After.
     * @default 60000
     */
    maxMs: number;
  };
  idempotency: {
    /**
     * The header that carries the idempotency key (IETF httpapi draft "The Idempotency-Key HTTP Header Field").
     * @default 'Idempotency-Key'
     */
    header: string;
  };
  /**
   * A header that tells the server which attempt it sees, valued `attempt=N; max=M` (like the AWS SDKs'
   * `amz-sdk-request`). `false` sends none.
   * @default false
   */
  attemptHeader: string | false;
}

/** What `definePolicy` and `createFailoverClient({ policy })` accept: any part of a policy. */
export type PolicyInput = {
  [K in keyof Policy]?: Policy[K] extends readonly number[]
    ? readonly number[]
    : Policy[K] extends object
      ? Partial<Policy[K]>
      : Policy[K];
};
