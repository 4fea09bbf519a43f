import { PolicyError, type PolicyIssue } from '../errors/policy-error.js';
import { defaultPolicy } from './defaults.js';
import type { Policy, PolicyInput } from './policy.js';
import { describeValue, policyInputSchema } from './schema.js';
import { toDotPath, toPolicyIssues } from './zod-issues.js';

/** Options of `definePolicy`. */
export interface DefinePolicyOptions {
  /**
   * What issue paths start with. `createFailoverClient` passes its own (e.g. `options.policy`) so that an
   * error points at the caller's code; `''` leaves paths relative (`backoff.initialMs`).
   * @default 'policy'
   */
  path?: string;
}

/**
 * Completes, validates and freezes a policy.
 *
 * - Each field you leave out takes its default (`defaultPolicy`, stated in the TSDoc of `Policy`); nested
 *   objects are merged field by field, so `{ backoff: { maxMs: 2000 } }` keeps the other backoff defaults.
 *   `undefined` counts as left out.
 * - A default never breaks a limit you set: a duration you leave out shrinks to fit under the one you set
 *   (`{ budgetMs: 2000 }` gives `timeouts.attemptMs` 2000 and `timeouts.connectMs` 2000; `{ backoff: { maxMs:
 *   100 } }` gives `backoff.initialMs` 100). A value you set is never changed.
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
  const raw: unknown = input === undefined ? {} : input;
  // Every check in the schema has its own message; this only guards against one added without.
  const parsed = policyInputSchema.safeParse(raw, {
    error: (issue) => `invalid value, got ${describeValue(issue.input)}`,
  });
  const issues: PolicyIssue[] = [];
  const invalid = new Set<string>();

  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (issue.code !== 'unrecognized_keys') invalid.add(issue.path.map(String).join('.'));
    }
    issues.push(...toPolicyIssues(parsed.error.issues, prefix, suggestOption));
    if (!isRecord(raw)) throw new PolicyError(issues);
  }

  const given = isRecord(raw) ? raw : {};
  const durations = linkedDurations(readDurations(given, invalid));
  const valid = (...paths: (keyof typeof durationPaths)[]) =>
    paths.every((name) => {
      const [group, key] = durationPaths[name];
      return !invalid.has(group) && (key === undefined || !invalid.has(`${group}.${key}`));
    });
  const notAbove = (lower: keyof typeof durationPaths, upper: keyof typeof durationPaths) => {
    if (!valid(lower, upper) || durations[lower] <= durations[upper]) return;
    issues.push({
      path: toDotPath(prefix, durationPaths[lower]),
      message: `must not exceed ${toDotPath(prefix, durationPaths[upper])} (${durations[upper]}), got ${durations[lower]}`,
    });
  };
  notAbove('attemptMs', 'budgetMs');
  notAbove('connectMs', 'attemptMs');
  notAbove('initialMs', 'maxMs');

  const attemptHeader = invalid.has('attemptHeader')
    ? undefined
    : (given['attemptHeader'] ?? defaultPolicy.attemptHeader);
  const idempotency = invalid.has('idempotency') ? undefined : given['idempotency'];
  const idempotencyHeader = invalid.has('idempotency.header')
    ? undefined
    : ((isRecord(idempotency) ? idempotency['header'] : undefined) ?? defaultPolicy.idempotency.header);
  if (
    typeof attemptHeader === 'string' &&
    typeof idempotencyHeader === 'string' &&
    attemptHeader.toLowerCase() === idempotencyHeader.toLowerCase()
  ) {
    issues.push({
      path: toDotPath(prefix, ['attemptHeader']),
      message: `must differ from ${toDotPath(prefix, ['idempotency', 'header'])} (${describeValue(idempotencyHeader)}), got ${describeValue(attemptHeader)}`,
    });
  }

  if (!parsed.success || issues.length > 0) throw new PolicyError(issues);

  const data = parsed.data;
  return deepFreeze<Policy>({
    attempts: { max: data.attempts?.max ?? defaultPolicy.attempts.max },
    budgetMs: durations.budgetMs,
    timeouts: { attemptMs: durations.attemptMs, connectMs: durations.connectMs },
    backoff: {
      initialMs: durations.initialMs,
      maxMs: durations.maxMs,
      multiplier: data.backoff?.multiplier ?? defaultPolicy.backoff.multiplier,
      jitter: data.backoff?.jitter ?? defaultPolicy.backoff.jitter,
    },
    retryableStatuses: [...(data.retryableStatuses ?? defaultPolicy.retryableStatuses)],
    retryAfter: { maxMs: data.retryAfter?.maxMs ?? defaultPolicy.retryAfter.maxMs },
    idempotency: { header: data.idempotency?.header ?? defaultPolicy.idempotency.header },
    attemptHeader: data.attemptHeader ?? defaultPolicy.attemptHeader,
  });
}

/** The durations that are checked against each other, and where each one lives. */
const durationPaths = {
  budgetMs: ['budgetMs'],
  attemptMs: ['timeouts', 'attemptMs'],
  connectMs: ['timeouts', 'connectMs'],
  initialMs: ['backoff', 'initialMs'],
  maxMs: ['backoff', 'maxMs'],
} as const satisfies Record<string, readonly [string] | readonly [string, string]>;

type Durations = Record<keyof typeof durationPaths, number>;

/** The linked durations the caller set to a valid number (an invalid one is reported already). */
function readDurations(input: Record<string, unknown>, invalid: ReadonlySet<string>): Partial<Durations> {
  const read: Partial<Durations> = {};
  for (const name of Object.keys(durationPaths) as (keyof Durations)[]) {
    const [group, key] = durationPaths[name];
    const container = key === undefined ? input : input[group];
    const value = isRecord(container) ? container[key ?? group] : undefined;
    if (typeof value === 'number' && !invalid.has(key === undefined ? group : `${group}.${key}`))
      read[name] = value;
  }
  return read;
}

/** Fills in the linked durations left out; a default never exceeds the limit above it. */
function linkedDurations(set: Partial<Durations>): Durations {
  const budgetMs = set.budgetMs ?? defaultPolicy.budgetMs;
  const attemptMs = set.attemptMs ?? Math.min(defaultPolicy.timeouts.attemptMs, budgetMs);
  const connectMs = set.connectMs ?? Math.min(defaultPolicy.timeouts.connectMs, attemptMs);
  const maxMs = set.maxMs ?? defaultPolicy.backoff.maxMs;
  const initialMs = set.initialMs ?? Math.min(defaultPolicy.backoff.initialMs, maxMs);
  return { budgetMs, attemptMs, connectMs, initialMs, maxMs };
}

/** Options that users of other libraries reach for, and where failwise keeps them. */
const movedOptions: Readonly<Record<string, readonly string[]>> = {
  maxAttempts: ['attempts', 'max'],
  retries: ['attempts', 'max'],
  timeout: ['timeouts', 'attemptMs'],
  timeoutMs: ['timeouts', 'attemptMs'],
  deadlineMs: ['budgetMs'],
  jitter: ['backoff', 'jitter'],
};

/** The option an unknown key most likely meant: a moved one, or a known one spelt in another case. */
function suggestOption(groupPath: readonly PropertyKey[], key: string): readonly PropertyKey[] | undefined {
  if (groupPath.length === 0 && Object.hasOwn(movedOptions, key)) return movedOptions[key];
  const group: unknown =
    groupPath.length === 0
      ? defaultPolicy
      : (defaultPolicy as unknown as Record<PropertyKey, unknown>)[groupPath[0] as PropertyKey];
  if (groupPath.length > 1 || !isRecord(group)) return undefined;
  const known = Object.keys(group).find((name) => name.toLowerCase() === key.toLowerCase());
  return known === undefined ? undefined : [...groupPath, known];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepFreeze<T>(value: T): Readonly<T> {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
