import { ArgumentError } from '../errors/argument-error.js';
import { FailwiseError } from '../errors/failwise-error.js';
import type { OutboxEntry, ReplacedEntry } from './outbox-store.js';
import { isRecord } from '../policy/is-record.js';

/*
 * The checks every store makes on what it is given, so that all stores refuse the same bad input with the
 * same message. They run before anything is written: SQLite's JSON would quietly turn NaN into null, and
 * IndexedDB would fail on a function with a DataCloneError that names no field.
 */

/** `value` described for an error message: `got 42`, `got null`, `got an array`. */
const got = (value: unknown): string =>
  value === null
    ? 'got null'
    : Array.isArray(value)
      ? 'got an array'
      : typeof value === 'string'
        ? `got ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`
        : typeof value === 'number' || typeof value === 'boolean' || typeof value === 'undefined'
          ? `got ${String(value)}`
          : `got a ${typeof value}`;

const isFiniteNumber = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value);

/** The first thing wrong with `entry`, as `path: expected ... (got ...)`, or undefined when it is fine. */
function entryProblem(entry: unknown): string | undefined {
  if (!isRecord(entry)) return `entry: expected an OutboxEntry object (${got(entry)})`;
  const { request } = entry;
  const checks: [boolean, string, string, unknown][] = [
    [typeof entry.id === 'string' && entry.id !== '', 'id', 'a non-empty string', entry.id],
    [isFiniteNumber(entry.createdAt), 'createdAt', 'a finite number', entry.createdAt],
    [isRecord(request), 'request', 'an object', request],
  ];
  if (isRecord(request)) {
    const { headers, body } = request;
    checks.push(
      [
        typeof request.method === 'string' && request.method !== '',
        'request.method',
        'a non-empty string',
        request.method,
      ],
      [typeof request.path === 'string', 'request.path', 'a string', request.path],
      [
        isRecord(headers) && Object.values(headers).every((value) => typeof value === 'string'),
        'request.headers',
        'an object of strings',
        headers,
      ],
      [
        body === undefined || typeof body === 'string' || body instanceof Uint8Array,
        'request.body',
        'a string, a Uint8Array or undefined',
        body,
      ],
      [
        request.idempotent === undefined || typeof request.idempotent === 'boolean',
        'request.idempotent',
        'a boolean or undefined',
        request.idempotent,
      ],
      [
        request.policy === undefined || isRecord(request.policy),
        'request.policy',
        'an object or undefined',
        request.policy,
      ],
    );
  }
  checks.push(
    [
      typeof entry.idempotencyKey === 'string' && entry.idempotencyKey !== '',
      'idempotencyKey',
      'a non-empty string',
      entry.idempotencyKey,
    ],
    [
      entry.orderKey === undefined || typeof entry.orderKey === 'string',
      'orderKey',
      'a string or undefined',
      entry.orderKey,
    ],
    [
      entry.replaceKey === undefined || typeof entry.replaceKey === 'string',
      'replaceKey',
      'a string or undefined',
      entry.replaceKey,
    ],
    [
      Number.isInteger(entry.attempts) && (entry.attempts as number) >= 0,
      'attempts',
      'an integer >= 0',
      entry.attempts,
    ],
    [isFiniteNumber(entry.nextAttemptAt), 'nextAttemptAt', 'a finite number', entry.nextAttemptAt],
    [
      Array.isArray(entry.failures) && entry.failures.every(isRecord),
      'failures',
      'an array of Failure objects',
      entry.failures,
    ],
    [entry.status === 'pending' || entry.status === 'dead', 'status', "'pending' or 'dead'", entry.status],
    [
      entry.deadReason === undefined || typeof entry.deadReason === 'string',
      'deadReason',
      'a string or undefined',
      entry.deadReason,
    ],
  );
  const bad = checks.find(([ok]) => !ok);
  return bad && `entry.${bad[1]}: expected ${bad[2]} (${got(bad[3])})`;
}

/**
 * Throws an ArgumentError naming the first bad field of `entry`.
 * @internal
 */
export function checkEntry(who: string, entry: unknown): asserts entry is OutboxEntry {
  const problem = entryProblem(entry);
  if (problem === undefined) return;
  const at = problem.indexOf(': ');
  throw new ArgumentError(who, problem.slice(0, at), problem.slice(at + 2));
}

/**
 * Throws an ArgumentError unless `id` is a non-empty string.
 * @internal
 */
export function checkId(who: string, id: unknown): asserts id is string {
  if (typeof id !== 'string' || id === '')
    throw new ArgumentError(who, 'id', `expected a non-empty string (${got(id)})`);
}

/**
 * Throws an ArgumentError naming the bad argument of `acquireLease(owner, ttlMs, now)`.
 * @internal
 */
export function checkLease(who: string, owner: unknown, ttlMs: unknown, now: unknown): void {
  if (typeof owner !== 'string' || owner === '')
    throw new ArgumentError(who, 'owner', `expected a non-empty string (${got(owner)})`);
  if (!isFiniteNumber(ttlMs) || ttlMs <= 0)
    throw new ArgumentError(who, 'ttlMs', `expected a finite number > 0 (${got(ttlMs)})`);
  if (!isFiniteNumber(now)) throw new ArgumentError(who, 'now', `expected a finite number (${got(now)})`);
}

export { closedError } from './closed-error.js';

/**
 * The rejection of `add` when the id is taken.
 * @internal
 */
export const duplicateIdError = (who: string, id: string): FailwiseError =>
  new FailwiseError(`${who}: an entry with id ${JSON.stringify(id)} exists already`);

/**
 * The rejection of `update` when there is no entry to replace.
 * @internal
 */
export const unknownIdError = (who: string, id: string): FailwiseError =>
  new FailwiseError(
    `${who}: no entry with id ${JSON.stringify(id)} to update (it was removed or never added)`,
  );

/**
 * Throws an ArgumentError unless `replaces` is undefined or a list of `{ id, attempts }` for an entry that has a
 * `replaceKey`; answers the list (empty when undefined).
 * @internal
 */
export function checkReplaces(who: string, entry: OutboxEntry, replaces: unknown): readonly ReplacedEntry[] {
  if (replaces === undefined) return [];
  const ok =
    Array.isArray(replaces) &&
    replaces.every(
      (r: unknown) =>
        isRecord(r) &&
        typeof r.id === 'string' &&
        r.id !== '' &&
        r.id !== entry.id &&
        Number.isInteger(r.attempts) &&
        (r.attempts as number) >= 0,
    );
  if (!ok)
    throw new ArgumentError(
      who,
      'replaces',
      `expected a list of { id, attempts } of other entries (${got(replaces)})`,
    );
  if (replaces.length > 0 && entry.replaceKey === undefined)
    throw new ArgumentError(who, 'replaces', 'only an entry with a replaceKey replaces others');
  return replaces as readonly ReplacedEntry[];
}

/**
 * Whether `stored` may be removed by the add of `entry` that lists it (`ReplacedEntry`); a store with claims
 * also checks that no other live runner claims it.
 * @internal
 */
export const isReplaceable = (
  stored: OutboxEntry | undefined,
  replaced: ReplacedEntry,
  entry: OutboxEntry,
): boolean =>
  stored !== undefined &&
  stored.status === 'pending' &&
  stored.attempts === replaced.attempts &&
  entry.replaceKey !== undefined &&
  stored.replaceKey === entry.replaceKey;
