/**
 * Reading a response's rate-limit fields: what the server says is left of its quota, and when that quota
 * resets. Pure: `now` is a `clock.now()` value passed in.
 *
 * Read in this order, the first that gives both a remaining count and a reset wins:
 * 1. `RateLimit` (IETF httpapi draft, structured field): `"default";r=0;t=30`, a list of quota policies, each
 *    with `r` (requests remaining) and `t` (seconds until the quota resets). With several policies, the one that
 *    binds soonest counts: the fewest remaining, then the latest reset.
 * 2. The older draft's separate `RateLimit-Remaining` and `RateLimit-Reset`, then the common
 *    `X-RateLimit-Remaining` and `X-RateLimit-Reset`. Their reset is seconds from now, except that a number of
 *    seconds at or past 2024-01-01 (1,704,067,200) is epoch seconds, as ky reads it: no window is that long,
 *    and GitHub, Twitter and others send epoch seconds there.
 *
 * `RateLimit-Policy: "default";q=100;w=60` (the quota, `q` requests per `w` seconds) is read alongside, so that
 * the quota can be kept after the reset without waiting for the next response to name it.
 */

/** What a response says of its origin's quota. */
export interface RateLimitFields {
  /** Requests the server will still take before `resetAt`; 0: none. */
  remaining: number;
  /** When the quota resets, on the client's clock. */
  resetAt: number;
  /** The quota after the reset, when `RateLimit-Policy` names one: `limit` requests per `windowMs`. */
  policy?: { limit: number; windowMs: number } | undefined;
}

/** Seconds at or past 2024-01-01 are epoch seconds, not a delay (ky's rule). */
const EPOCH_SECONDS_FROM = 1_704_067_200;

/** A non-negative integer as the fields write one: digits only (an sf-integer has at most 15). */
const DIGITS = /^\d{1,15}$/;

/** The parameters of one member of a structured-field list (RFC 9651): `"name";r=0;t=30` gives `{ r: 0, t: 30 }`. */
type Params = Readonly<Record<string, number>>;

/**
 * The members of a structured-field list, each with its integer parameters, or `undefined` when the value is not
 * one. The member itself must be a string (`"default"`) or a token (`default`); parameters whose value is not a
 * non-negative integer are left out, as a recipient ignores parameters it does not know.
 */
export function parseListParams(value: string): Params[] | undefined {
  const members: Params[] = [];
  for (const raw of value.split(',')) {
    const [item = '', ...params] = raw.trim().split(';');
    if (!/^(?:"[^"\\]*"|[A-Za-z*][\w:/.*!#$%&'+^`|~-]*)$/.test(item.trim())) return undefined;
    const member: Record<string, number> = {};
    for (const param of params) {
      const [key = '', text] = param.trim().split('=');
      if (!/^[a-z*][a-z0-9_.*-]*$/.test(key)) return undefined;
      if (text !== undefined && DIGITS.test(text)) member[key] = Number(text);
    }
    members.push(member);
  }
  return members;
}

/** The `RateLimit` field's binding policy: the fewest remaining, then the latest reset. */
function fromRateLimitField(value: string, now: number): RateLimitFields | undefined {
  let best: RateLimitFields | undefined;
  for (const { r, t } of parseListParams(value) ?? []) {
    if (r === undefined || t === undefined) continue;
    const candidate = { remaining: r, resetAt: now + t * 1000 };
    if (
      best === undefined ||
      candidate.remaining < best.remaining ||
      (candidate.remaining === best.remaining && candidate.resetAt > best.resetAt)
    )
      best = candidate;
  }
  return best;
}

/** The first `RateLimit-Policy` member with both `q` and `w` (`w` more than 0). */
function fromPolicyField(value: string): RateLimitFields['policy'] {
  for (const { q, w } of parseListParams(value) ?? [])
    if (q !== undefined && w !== undefined && w > 0) return { limit: q, windowMs: w * 1000 };
  return undefined;
}

/** A reset in seconds from now, or in epoch seconds from 2024 on (ky's rule), on the client's clock. */
function resetAtOf(text: string, now: number): number | undefined {
  if (!DIGITS.test(text)) return undefined;
  const seconds = Number(text);
  return seconds >= EPOCH_SECONDS_FROM ? seconds * 1000 : now + seconds * 1000;
}

/**
 * A remaining / reset pair of separate fields, both needed. The reset is read only when the remaining count is
 * there: most responses have neither, and every response is read (the names are constants, so reading makes
 * no string).
 */
function fromPair(
  headers: FieldReader,
  [remainingName, resetName]: readonly [string, string],
  now: number,
): RateLimitFields | undefined {
  const count = headers.get(remainingName)?.trim();
  if (count === undefined || !DIGITS.test(count)) return undefined;
  const resetAt = resetAtOf(headers.get(resetName)?.trim() ?? '', now);
  return resetAt === undefined ? undefined : { remaining: Number(count), resetAt };
}

/** Reads a field by its lower-case name: a response's `Headers` is one. */
export interface FieldReader {
  get(name: string): string | null;
  /** Visits every field once, by its lower-case name (a `Headers` can). */
  forEach?(visit: (value: string, name: string) => void, thisArg?: unknown): void;
  /** whatwg-fetch's `Headers` (React Native's) keeps its fields in this plain object (`onePass`). */
  map?: unknown;
}

/**
 * Whether to gather the fields in one pass over them rather than look each up by name. On React Native's fetch
 * (whatwg-fetch, whose `Headers` keeps its fields in a plain object, `map`) a lookup checks its name with a
 * regular expression, twice: three lookups cost about 32,000 instructions on Hermes, one pass over a few fields a
 * fraction of that. Node's and browsers' lookups are the cheaper there (on Node three take about 0.3 µs, a pass
 * over eight fields about 1 µs). Either way the same fields are read.
 */
function onePass(reader: FieldReader): boolean {
  return typeof reader.forEach === 'function' && typeof reader.map === 'object' && reader.map !== null;
}

/** Every field read here, by lower-case name. */
const RATE_LIMIT_NAMES: ReadonlySet<string> = new Set([
  'ratelimit',
  'ratelimit-policy',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
]);

/** The rate-limit fields of one response, gathered in one pass (`FieldReader.forEach`); none, no map. */
class GatheredFields implements FieldReader {
  values: Map<string, string> | undefined = undefined;

  get(name: string): string | null {
    return this.values?.get(name) ?? null;
  }
}

/** `forEach`'s visit, with the `GatheredFields` as `this`: no closure per response. */
function gather(this: GatheredFields, value: string, name: string): void {
  // Every name read here starts with r or x: most fields are passed over without a lookup.
  const first = name.charCodeAt(0);
  if ((first === 114 || first === 120) && RATE_LIMIT_NAMES.has(name))
    (this.values ??= new Map()).set(name, value);
}

const RATELIMIT_PAIR = ['ratelimit-remaining', 'ratelimit-reset'] as const;
const X_RATELIMIT_PAIR = ['x-ratelimit-remaining', 'x-ratelimit-reset'] as const;

/**
 * What the response's rate-limit fields say, read at `now`, or `undefined` when it has none that can be read
 * (absent, malformed, or a reset without a remaining count). `headers` reads a field by its lower-case name
 * (a response's `Headers` will do).
 */
export function parseRateLimitFields(response: FieldReader, now: number): RateLimitFields | undefined {
  let headers = response;
  if (onePass(response)) {
    const gathered = new GatheredFields();
    response.forEach!(gather, gathered);
    if (gathered.values === undefined) return undefined;
    headers = gathered;
  }
  const field = headers.get('ratelimit');
  const fields =
    (field === null ? undefined : fromRateLimitField(field, now)) ??
    fromPair(headers, RATELIMIT_PAIR, now) ??
    fromPair(headers, X_RATELIMIT_PAIR, now);
  if (fields === undefined) return undefined;
  const policy = headers.get('ratelimit-policy');
  const quota = policy === null ? undefined : fromPolicyField(policy);
  return quota === undefined ? fields : { ...fields, policy: quota };
}
