import { PolicyError } from '../errors/policy-error.js';
import { defaultPolicy } from './defaults.js';
import type { Policy, PolicyInput } from './policy.js';
import { describeValue, policyInputSchema } from './schema.js';
import { toDotPath, toPolicyIssues } from './zod-issues.js';
import { isRecord } from './is-record.js';

/** Options of `definePolicy`. */
export interface DefinePolicyOptions {
  /**
   * What issue paths start with. `createFailoverClient` passes its own (e.g. `options.policy`) so that an
   * error points at the caller's code; `''` leaves paths relative (`backoff.initialMs`).
   * @default 'policy'
   */
  path?: string;
  /**
   * The complete policy that the fields left out are taken from, as they would be from the defaults: a route's or
   * a request's policy is laid over the client's this way. A duration left out still shrinks to fit a limit set.
   * @default defaultPolicy
   */
  base?: Readonly<Policy>;
}

/**
 * Completes, validates and freezes a policy.
 *
 * - Each field you leave out takes its default (`defaultPolicy`, stated in the TSDoc of `Policy`); nested
 *   objects are merged field by field, so `{ backoff: { maxMs: 2000 } }` keeps the other backoff defaults.
 *   `undefined` counts as left out.
 * - A default never breaks a limit you set: a duration you leave out shrinks to fit under the one you set
 *   (`{ budgetMs: 2000 }` gives `timeouts.attemptMs` 2000 and `timeouts.connectMs` 2000; `{ backoff: { maxMs:
 *   100 } }` gives `backoff.initialMs` 100), and a count that must be at least another grows to it
 *   (`{ health: { failoverAfter: 20 } }` gives `health.dwellFailoverAfter` 20). A value you set is never changed.
 * - Every problem is collected, then thrown as one `PolicyError` naming each bad field by path:
 *   `policy.backoff.initialMs: expected a number >= 0, got -1`. docs/policy.md lists the rules.
 * - The result is a new object, deeply frozen; arrays are copied, never the caller's. Passing a complete
 *   policy (for example one `definePolicy` returned) gives an equal policy back.
 *
 * @throws PolicyError when `input` is not an object or any field is invalid.
 * @example
 * ```ts
 * const policy = definePolicy({ attempts: { max: 5 }, backoff: { jitter: 'decorrelated' } });
 * ```
 */
export function definePolicy(input?: PolicyInput, options: DefinePolicyOptions = {}): Readonly<Policy> {
  const prefix = options.path ?? 'policy';
  const base = options.base ?? defaultPolicy;
  const raw: unknown = input === undefined ? {} : input;
  const zodIssues = policyInputSchema.safeParse(raw).error?.issues ?? [];
  const issues = toPolicyIssues(zodIssues, prefix);
  if (!isRecord(raw)) throw new PolicyError(issues);

  /** Whether the field at `path`, or its group, is reported as invalid already: its value is not used. */
  const isInvalid = (path: string) =>
    zodIssues.some(
      (issue) => issue.code !== 'unrecognized_keys' && `${path}.`.startsWith(`${issue.path.join('.')}.`),
    );
  /** The value in effect at `path`: the caller's if set and valid, else the default (shrunk to fit its limit). */
  const valueAt = (path: string): unknown => {
    const keys = path.split('.');
    // A group the base turned off (`throttle: false`) and the caller turns on takes the defaults' values.
    const fallback = read(base, keys) ?? read(defaultPolicy, keys);
    const limit = limits[path];
    const floor = floors[path];
    return (
      (isInvalid(path) ? undefined : read(raw, keys)) ??
      (limit
        ? Math.min(fallback as number, valueAt(limit) as number)
        : floor
          ? Math.max(fallback as number, valueAt(floor) as number)
          : fallback)
    );
  };
  const named = (path: string) => toDotPath(prefix, path.split('.'));
  /**
   * Reports `path` when `broken`, unless `other` is invalid (it is reported already). An invalid `path` itself
   * never breaks a rule: its value in effect is a default that fits.
   */
  const check = (path: string, other: string, broken: boolean, rule: string) => {
    if (broken && !isInvalid(other)) {
      issues.push({
        path: named(path),
        message: `must ${rule} ${named(other)} (${describeValue(valueAt(other))}), got ${describeValue(valueAt(path))}`,
      });
    }
  };
  for (const [path, limit] of Object.entries(limits))
    check(path, limit, (valueAt(path) as number) > (valueAt(limit) as number), 'not exceed');
  for (const [path, floor] of Object.entries(floors))
    check(path, floor, (valueAt(path) as number) < (valueAt(floor) as number), 'not be below');
  const attemptHeader = valueAt('attemptHeader') as string | false;
  check(
    'attemptHeader',
    'idempotency.header',
    attemptHeader !== false &&
      attemptHeader.toLowerCase() === (valueAt('idempotency.header') as string).toLowerCase(),
    'differ from',
  );
  if (issues.length > 0) throw new PolicyError(issues);

  // A new object, deeply frozen, laid out like the defaults; arrays are copied, never the caller's.
  const fill = (defaults: object, group: string): unknown =>
    Object.freeze(
      Object.fromEntries(
        Object.entries(defaults).map(([key, fallback]) => {
          const value = valueAt(group + key);
          // A group that may be `false` (`throttle`): off stays off, on is filled in like any group.
          const shape = isRecord(fallback) ? fallback : read(defaultPolicy, `${group}${key}`.split('.'));
          return [
            key,
            isRecord(shape) && value !== false
              ? fill(shape, `${group}${key}.`)
              : Object.freeze(Array.isArray(value) ? [...(value as number[])] : value),
          ];
        }),
      ),
    );
  return fill(base, '') as Policy;
}

/**
 * The linked durations: each one's limit. A value the caller set above its limit is refused; a default shrinks
 * to fit under the limit in effect.
 */
const limits: Readonly<Record<string, string>> = {
  'timeouts.attemptMs': 'budgetMs',
  'timeouts.connectMs': 'timeouts.attemptMs',
  'backoff.initialMs': 'backoff.maxMs',
  'health.suspectAfter': 'health.failoverAfter',
  'health.minFailedOverMs': 'health.maxFailedOverMs',
  'health.reprobeAfterMs': 'health.maxFailedOverMs',
  'durable.initialMs': 'durable.maxMs',
};

/**
 * The linked counts: each one's floor. A value the caller set below its floor is refused; a default grows to
 * the floor in effect (`{ health: { failoverAfter: 20 } }` gives `dwellFailoverAfter` 20).
 */
const floors: Readonly<Record<string, string>> = {
  'health.dwellFailoverAfter': 'health.failoverAfter',
};

/** The value at `keys` in an object, or `undefined`. */
const read = (value: unknown, keys: readonly PropertyKey[]): unknown =>
  keys.reduce<unknown>((parent, key) => (isRecord(parent) ? parent[key as string] : undefined), value);
