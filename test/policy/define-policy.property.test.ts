/*
 * What this proves: `definePolicy` accepts every valid policy input, where "valid" is written here
 * independently of the implementation (each field within its documented range, each field optional, and the
 * linked durations consistent once defaults are filled in: connectMs <= attemptMs <= budgetMs,
 * initialMs <= maxMs). For each such input it returns a deeply frozen policy that keeps every value the
 * caller set, and feeding that policy back in gives an equal policy (definePolicy is idempotent, so a client
 * may call it on a policy the app already defined). It also proves the converse for single faults: spoil one
 * field of a valid input and the PolicyError names exactly that field's path. fast-check prints the seed and
 * path of any failure; replay it with `{ seed, path }` in the parameters below.
 */
import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { PolicyError } from '../../src/errors/policy-error.js';
import { defaultPolicy } from '../../src/policy/defaults.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import type { Jitter, PolicyInput } from '../../src/policy/policy.js';
import { MAX_TIMER_MS } from '../../src/policy/schema.js';

const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });

/** Mostly everyday durations, sometimes anything a timer allows. */
const duration = (min: number) =>
  fc.oneof(
    { arbitrary: fc.integer({ min, max: 20_000 }), weight: 4 },
    fc.integer({ min, max: MAX_TIMER_MS }),
  );

const headerName = fc.stringMatching(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,30}$/);

/** Statuses the schema accepts: 400..599 except those never retried. */
const retryableStatus = fc.integer({ min: 400, max: 599 }).filter((s) => s !== 400 && s !== 401 && s !== 422);

/** Drops the keys whose value is undefined, as a careful caller would (exactOptionalPropertyTypes). */
function compact<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

const rawInput = fc.record({
  max: optional(fc.integer({ min: 1, max: 100 })),
  budgetMs: optional(duration(1)),
  attemptMs: optional(duration(1)),
  connectMs: optional(duration(1)),
  initialMs: optional(duration(0)),
  maxMs: optional(duration(0)),
  multiplier: optional(fc.double({ min: 1, max: 1e6, noNaN: true })),
  jitter: optional(fc.constantFrom<Jitter[]>('full', 'equal', 'decorrelated', 'none')),
  retryableStatuses: optional(fc.array(retryableStatus, { maxLength: 8 })),
  retryAfterMaxMs: optional(duration(0)),
  idempotencyHeader: optional(headerName),
  attemptHeader: optional(fc.oneof(fc.constant(false as const), headerName)),
  groups: fc.record({
    attempts: fc.boolean(),
    timeouts: fc.boolean(),
    backoff: fc.boolean(),
    retryAfter: fc.boolean(),
    idempotency: fc.boolean(),
  }),
});

type Raw = typeof rawInput extends fc.Arbitrary<infer T> ? T : never;

/** The documented rules between fields, with the defaults filled in as docs/policy.md says. */
function isConsistent(raw: Raw): boolean {
  const budget = raw.budgetMs ?? defaultPolicy.budgetMs;
  const attempt = raw.attemptMs ?? Math.min(defaultPolicy.timeouts.attemptMs, budget);
  const connect = raw.connectMs ?? Math.min(defaultPolicy.timeouts.connectMs, attempt);
  const max = raw.maxMs ?? defaultPolicy.backoff.maxMs;
  const initial = raw.initialMs ?? Math.min(defaultPolicy.backoff.initialMs, max);
  const attemptHeader = raw.attemptHeader ?? defaultPolicy.attemptHeader;
  const idempotencyHeader = raw.idempotencyHeader ?? defaultPolicy.idempotency.header;
  return (
    connect <= attempt &&
    attempt <= budget &&
    initial <= max &&
    (attemptHeader === false || attemptHeader.toLowerCase() !== idempotencyHeader.toLowerCase())
  );
}

function toInput(raw: Raw): PolicyInput {
  return compact({
    attempts: raw.groups.attempts || raw.max !== undefined ? compact({ max: raw.max }) : undefined,
    budgetMs: raw.budgetMs,
    timeouts:
      raw.groups.timeouts || raw.attemptMs !== undefined || raw.connectMs !== undefined
        ? compact({ attemptMs: raw.attemptMs, connectMs: raw.connectMs })
        : undefined,
    backoff:
      raw.groups.backoff ||
      [raw.initialMs, raw.maxMs, raw.multiplier, raw.jitter].some((v) => v !== undefined)
        ? compact({
            initialMs: raw.initialMs,
            maxMs: raw.maxMs,
            multiplier: raw.multiplier,
            jitter: raw.jitter,
          })
        : undefined,
    retryableStatuses: raw.retryableStatuses,
    retryAfter:
      raw.groups.retryAfter || raw.retryAfterMaxMs !== undefined
        ? compact({ maxMs: raw.retryAfterMaxMs })
        : undefined,
    idempotency:
      raw.groups.idempotency || raw.idempotencyHeader !== undefined
        ? compact({ header: raw.idempotencyHeader })
        : undefined,
    attemptHeader: raw.attemptHeader,
  });
}

const validInput = rawInput.filter(isConsistent).map(toInput);

function isDeeplyFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(isDeeplyFrozen);
}

/** Every leaf the caller set, as [dot path, value]. */
function leaves(value: unknown, path = ''): [string, unknown][] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [[path, value]];
  return Object.entries(value).flatMap(([key, child]) => leaves(child, path === '' ? key : `${path}.${key}`));
}

function at(policy: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], policy);
}

/** One field, and a value the schema refuses for it whatever the rest of the policy says. */
const fault = fc.constantFrom<[string, unknown]>(
  ['attempts.max', 0],
  ['attempts.max', 1.5],
  ['budgetMs', -1],
  ['budgetMs', '1000'],
  ['timeouts.attemptMs', 0],
  ['timeouts.connectMs', Number.NaN],
  ['backoff.initialMs', -1],
  ['backoff.maxMs', MAX_TIMER_MS + 1],
  ['backoff.multiplier', 0.99],
  ['backoff.jitter', 'random'],
  ['retryAfter.maxMs', Infinity],
  ['idempotency.header', 'has space'],
  ['attemptHeader', true],
);

function withFault(input: PolicyInput, [path, bad]: [string, unknown]): unknown {
  const copy = structuredClone(input) as Record<string, unknown>;
  const [group, key] = path.split('.') as [string, string | undefined];
  if (key === undefined) copy[group] = bad;
  else copy[group] = { ...(copy[group] as object | undefined), [key]: bad };
  return copy;
}

describe('definePolicy', () => {
  test.prop([validInput], { numRuns: 1000 })(
    'accepts every valid input and keeps each value set',
    (input) => {
      const policy = definePolicy(input);
      expect(isDeeplyFrozen(policy)).toBe(true);
      for (const [path, value] of leaves(input)) expect(at(policy, path)).toEqual(value);
    },
  );

  test.prop([validInput], { numRuns: 1000 })(
    'gives an equal policy back when given its own result',
    (input) => {
      const policy = definePolicy(input);
      expect(definePolicy(policy)).toEqual(policy);
    },
  );

  test.prop([validInput, fault], { numRuns: 1000 })(
    'names the one field spoilt in a valid input',
    (input, bad) => {
      let error: unknown;
      try {
        definePolicy(withFault(input, bad) as PolicyInput);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(PolicyError);
      expect((error as PolicyError).issues.map((issue) => issue.path)).toEqual([`policy.${bad[0]}`]);
    },
  );
});
