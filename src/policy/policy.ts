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
    /**
     * How long a body handed over as a stream (an event stream, `stream: true`, a body longer than the 1 MiB
     * read within the attempt) may go without a chunk while the app waits on a read; then the body errors with
     * a `TimeoutError`, so `text()` or a reader rejects rather than waits for ever. Not bounded by `budgetMs`:
     * the attempt has ended, and a stream may flow longer than any request. 60 s is what nginx
     * (`proxy_read_timeout`) and AWS load balancers allow an idle connection by default.
     * @default 60000
     */
    idleMs: number;
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
    /**
     * The longest a server hold lasts: a 429 or 503 whose Retry-After asks for more holds its origin back,
     * for every request of the client, this long and no longer (the request that got it still ends, as
     * `maxMs` says). Five minutes: past any interactive budget and `maxMs`, long enough for an origin to
     * shed an overload, short enough that a `Retry-After: 86400` (or a wrong clock) does not leave an
     * origin unused for a day. AWS SDKs clamp the server's hint the same way.
     * @default 300000
     */
    maxHoldMs: number;
    /**
     * The requests a hold kept waiting (a server hold, or a spent `RateLimit` quota) are released over this
     * window after it ends, each at a jittered time, rather than all in one instant (the herd the RateLimit
     * draft warns of). A request never waits past its budget for it. `0` releases them together.
     * @default 1000
     */
    releaseSpreadMs: number;
  };
  /**
   * The client's own send rate per origin, after AWS SDKs' adaptive retry mode: off until an origin answers
   * 429, then a token bucket whose rate drops to `beta` times the rate measured at a 429 (once per half
   * second: the 429s soon after a decrease are the same congestion event) and climbs back (CUBIC) as the
   * origin answers. The origin's `RateLimit` / `X-RateLimit-*` fields are kept as well. A
   * request that cannot get a send slot within its budget ends `failed` / `throttled`, nothing sent; durable
   * work is deferred. After a throttle the client is quiet towards the origin for a while sized by its own
   * interval between requests (`quietIntervals`, `maxQuietMs`). `false` turns all of it off
   * (docs/policy.md#throttle). Client-wide: the send slots are the client's, so only the client's policy sets it.
   * @default { beta: 0.7, minRatePerSecond: 0.5, quietIntervals: 4, maxQuietMs: 30000 }
   */
  throttle: ThrottlePolicy | false;
  /**
   * A client-wide cap on retries, after Envoy's retry budget: a request may begin retrying only while the
   * requests retrying (from their first retry until they end) are fewer than `percent` of the requests in
   * progress, or than `minConcurrency`, whichever is more. Otherwise it ends at once with
   * `retry-budget-exhausted`. During an outage, this is what keeps many requests from tripling the load on
   * the origin; a lone request still gets its retries. The one more attempt after an auth refresh (rule 3) is
   * not a retry.
   */
  retryBudget: {
    /** @default 20 */
    percent: number;
    /** @default 3 */
    minConcurrency: number;
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
  /** When the primary origin counts as failing, and how traffic fails back (docs/failover.md). */
  health: HealthPolicy;
  /** How the outbox sends durable work (docs/durable.md). */
  durable: DurablePolicy;
  /** What `lifetime: 'cached'` reads may serve (docs/durable.md#cached-reads). */
  cache: {
    /** A cached response older than this is never served. @default 86400000 (one day) */
    maxAgeMs: number;
    /** Responses the default memory cache keeps, least recently used out first. @default 100 */
    maxEntries: number;
  };
}

/** `policy.throttle`: how the send rate adapts to an origin's 429s (src/policy/adaptive-rate.ts). */
export interface ThrottlePolicy {
  /** The send rate after a 429, as a share of the rate measured then. @default 0.7 */
  beta: number;
  /** The slowest the send rate goes, in attempts a second. @default 0.5 */
  minRatePerSecond: number;
  /**
   * After an origin throttles (a 429, or an answer whose `RateLimit` / `X-RateLimit-*` fields leave nothing
   * remaining), the client sends nothing new to it for this many times its own smoothed interval between
   * request starts to that origin (src/policy/quiet-period.ts): a heavy client's quiet period is short, a light
   * client's long enough that its next requests wait or, past their budget, end `throttled` with nothing sent.
   * Before the client has started two requests to the origin with a gap between them, only a second throttle
   * running starts one; the request a Retry-After answered comes back when the server said, held only once the
   * origin has throttled twice running. 0 turns the quiet period off. @default 4
   */
  quietIntervals: number;
  /** The longest quiet period, ms; never longer than `retryAfter.maxHoldMs` either. @default 30000 */
  maxQuietMs: number;
}

/**
 * Origin health criteria and failback hysteresis. A failure counts against an origin when it says the origin
 * is unwell: no connection, a timeout, a broken connection, a TLS failure, a 5xx. A 429, any other 4xx,
 * `cancelled`, `offline`, and any failure while connectivity says offline never count.
 */
export interface HealthPolicy {
  /**
   * Consecutive counted failures on the primary that make it `suspect` (traffic stays on it).
   * @default 2
   */
  suspectAfter: number;
  /**
   * Consecutive successes that make a `suspect` primary `healthy` again. Less than `suspectAfter` by
   * default: leaving `healthy` takes more evidence than returning to it.
   * @default 1
   */
  recoverAfter: number;
  /**
   * Consecutive counted failures on the primary that fail traffic over to the backups. A TLS failure fails
   * over at once. Must be >= `suspectAfter`.
   * @default 5
   */
  failoverAfter: number;
  /**
   * Fails over when at least this share of the primary's outcomes in the last `windowMs` were counted
   * failures, once there were at least `minRequests` of them (as Polly v8 and resilience4j do).
   * @default 0.5
   */
  failureRatio: number;
  /** The sliding window of `failureRatio`. @default 30000 */
  windowMs: number;
  /** Outcomes needed in the window before `failureRatio` is judged. @default 10 */
  minRequests: number;
  /**
   * The least time traffic stays failed over before the primary is first probed. It doubles on each failover
   * within `maxFailedOverMs` of a failback, up to `maxFailedOverMs` (Envoy's growing ejection time), so a
   * flapping primary is given longer and longer to settle; a failover after the primary stayed up longer starts
   * again from this value.
   * @default 30000
   */
  minFailedOverMs: number;
  /** The longest failed-over wait. Must be >= `minFailedOverMs` and `reprobeAfterMs`. @default 300000 */
  maxFailedOverMs: number;
  /**
   * After a failed probe, traffic stays failed over this long before the next probe; each further failed probe
   * in a row doubles it, up to `maxFailedOverMs`, and `reprobeJitter` spreads it, so a fleet's clients find a
   * recovered primary soon and not all at once (gRPC's connection backoff, AWS's "Exponential Backoff And
   * Jitter"). Must be <= `maxFailedOverMs`.
   * @default 5000
   */
  reprobeAfterMs: number;
  /**
   * How the wait after a failed probe is randomised: `equal` waits half of it plus a random part of the other
   * half, `full` a random part of all of it, `none` all of it.
   * @default 'equal'
   */
  reprobeJitter: 'equal' | 'full' | 'none';
  /**
   * After a failback, for this long the primary is left only on strong evidence (`dwellFailoverAfter` counted
   * failures in a row, or a TLS failure); the failure ratio is not judged. Failing back and over again within
   * one failover dwell is flapping; a primary that is down again is still left after `dwellFailoverAfter`
   * failures. `0` turns it off.
   * @default 30000
   */
  failbackDwellMs: number;
  /**
   * Counted failures of the primary in a row that fail traffic over within `failbackDwellMs` of a failback.
   * Must be >= `failoverAfter`; when not set, it is at least `failoverAfter`.
   * @default 10
   */
  dwellFailoverAfter: number;
  /** Consecutive successful probes of the primary that fail traffic back to it. @default 3 */
  probeSuccesses: number;
  /** The wait between two probes while probing failback. @default 5000 */
  probeIntervalMs: number;
  /** A probe that has not answered within this time failed. @default 5000 */
  probeTimeoutMs: number;
}

/** How durable work is retried from the outbox, bounded like Android WorkManager's backoff. */
export interface DurablePolicy {
  /**
   * How the wait before an entry's next send grows with the attempts it has made (live ones included):
   * `exponential` waits `initialMs * 2^(attempts - 1)`, `linear` `initialMs * attempts`, capped at `maxMs` and
   * never shorter than a Retry-After. A send can make up to `attempts.max` attempts, so with the defaults the
   * waits are 40 s, 320 s and 2560 s. @default 'exponential'
   */
  backoff: 'exponential' | 'linear';
  /** The base of the waits between sends (see `backoff`). @default 10000 */
  initialMs: number;
  /** No wait is longer (5 hours). Must be >= `initialMs`. @default 18000000 */
  maxMs: number;
  /**
   * How each wait is spread, drawn from the client's `random`: `full` waits a random time up to the backoff,
   * `equal` half of it plus a random time up to the other half, `none` exactly the backoff. Spread, a fleet
   * whose sends failed together (an outage, a deploy) does not come back in step. Never shorter than a
   * Retry-After. @default 'full'
   */
  jitter: 'full' | 'equal' | 'none';
  /**
   * Attempts per entry, the live ones included; then it is dead-lettered (`attempts-exhausted`). High, so that
   * `maxAgeMs` is what bounds durable work (docs/durable.md, "How long the outbox keeps trying"). @default 1000
   */
  maxAttempts: number;
  /** An entry older than this is dead-lettered (`expired`) instead of sent (7 days, as Workbox). @default 604800000 */
  maxAgeMs: number;
  /** `fifo`: one queue, in order. `per-key`: entries with the same `orderKey` keep their order, others do not wait for them. @default 'fifo' */
  order: 'fifo' | 'per-key';
  /** Entries sent at the same time, with `order: 'per-key'` (with `'fifo'` the head of the queue goes alone). @default 1 */
  concurrency: number;
  /**
   * How long `client.outbox.flush()` waits for the outbox lease while another live tab or process holds it
   * (it is sending; it gives the lease back once it is idle). Then flush resolves with
   * `reason: 'lease-held'`. A lease whose holder died is free at once, and `0` never waits.
   * @default 5000
   */
  flushWaitMs: number;
}

/** What `definePolicy` and `createFailoverClient({ policy })` accept: any part of a policy. */
export type PolicyInput = {
  [K in keyof Policy]?: Policy[K] extends readonly number[]
    ? readonly number[]
    : Policy[K] extends object
      ? Partial<Policy[K]>
      : Policy[K] extends object | false
        ? Partial<Exclude<Policy[K], false>> | false
        : Policy[K];
};
