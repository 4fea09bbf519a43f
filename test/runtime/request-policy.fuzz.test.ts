/*
 * Request policies and routes under arbitrary values, as request-input.fuzz.test.ts does for the request's own
 * fields. Fixed seeds (a failure names its seed and the shrunk input):
 *
 * - a request policy made only of valid values proceeds, and makes no more attempts than it allows;
 * - a request policy with one value from a written-out list of invalid ones (a client-wide part among them)
 *   rejects with a RequestError naming `request.policy.<that part>`, before anything is sent;
 * - an arbitrary request policy either proceeds or rejects with a RequestError naming `request.policy...`:
 *   never a TypeError, never a hang;
 * - arbitrary routes either make a client or throw a PolicyError whose every issue is under `routes`, and a
 *   route with one invalid value is refused naming that route's field.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { PolicyError } from '../../src/errors/policy-error.js';
import { RequestError } from '../../src/errors/request-error.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import type { FailoverClientOptions } from '../../src/runtime/client-options.js';
import type { FailoverRequest } from '../../src/runtime/prepare-request.js';
import { respond, scriptedTransport } from '../helpers/scripted-transport.js';

const MAX = 2_147_483_647;

/** A client (every reply 503) and a way to run one request on it to its end, or to a hang. */
function setUp(options: Partial<FailoverClientOptions> = {}) {
  const clock = simulatedClock();
  const transport = scriptedTransport(clock, [{ reply: respond(503) }]);
  const client = createFailoverClient({
    origins: [{ id: 'primary', url: 'https://api.example.test' }],
    clock,
    transport,
    random: () => 0.5,
    ...options,
  });
  const run = async (request: FailoverRequest) => {
    let settled: { outcome: { status: string; attempts?: number } } | { error: unknown } | undefined;
    const done = client.request(request).then(
      (outcome) => void (settled = { outcome }),
      (error: unknown) => void (settled = { error }),
    );
    for (let round = 0; round < 50 && settled === undefined; round++) {
      await clock.runAll();
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (settled === undefined) return { hung: true as const, calls: transport.calls.length };
    await done;
    return { ...(settled as object), calls: transport.calls.length } as
      { outcome: { status: string; attempts: number }; calls: number } | { error: unknown; calls: number };
  };
  return { client, run };
}

/** A valid request policy over the defaults: each limit kept whichever of the linked fields are left out. */
const validPolicy: fc.Arbitrary<Record<string, unknown>> = fc
  .record({
    max: fc.integer({ min: 1, max: 6 }),
    budgetMs: fc.integer({ min: 1, max: 20_000 }),
    attemptShare: fc.double({ min: 0, max: 1, noNaN: true }),
    connectShare: fc.double({ min: 0, max: 1, noNaN: true }),
    idleMs: fc.integer({ min: 1, max: MAX }),
    maxMs: fc.integer({ min: 0, max: 5_000 }),
    initialShare: fc.double({ min: 0, max: 1, noNaN: true }),
    multiplier: fc.double({ min: 1, max: 10, noNaN: true }),
    jitter: fc.constantFrom('full', 'equal', 'decorrelated', 'none'),
    statuses: fc.uniqueArray(fc.constantFrom(408, 409, 425, 429, 500, 502, 503, 504), { maxLength: 4 }),
    retryAfterMs: fc.integer({ min: 0, max: 120_000 }),
  })
  .chain((v) => {
    const attemptMs = Math.max(1, Math.floor(Math.min(v.budgetMs, 5_000) * v.attemptShare));
    const full = {
      attempts: { max: v.max },
      budgetMs: v.budgetMs,
      timeouts: {
        attemptMs,
        connectMs: Math.max(1, Math.floor(attemptMs * v.connectShare)),
        idleMs: v.idleMs,
      },
      backoff: {
        initialMs: Math.floor(v.maxMs * v.initialShare),
        maxMs: v.maxMs,
        multiplier: v.multiplier,
        jitter: v.jitter,
      },
      retryableStatuses: v.statuses,
      retryAfter: { maxMs: v.retryAfterMs },
    };
    // Any subset of the fields, and any subset of each group's.
    return fc.subarray(Object.keys(full)).map((keys) => {
      const policy: Record<string, unknown> = {};
      for (const key of keys) policy[key] = full[key as keyof typeof full];
      return policy;
    });
  });

/** Values each part refuses whatever the others are, written out (not taken from the code under test). */
const INVALID: Record<string, readonly unknown[]> = {
  attempts: [5, 'x', null, [], { max: 0 }, { max: 101 }, { max: 1.5 }, { max: '3' }, { tries: 1 }],
  budgetMs: [0, -1, 1.5, '1000', null, MAX + 1, Number.NaN, Infinity, 10n, {}],
  timeouts: [
    5,
    null,
    { attemptMs: 0 },
    { connectMs: -1 },
    { idleMs: 'x' },
    { readMs: 1 },
    { attemptMs: 20_000 },
  ],
  backoff: [
    'x',
    { initialMs: -1 },
    { multiplier: 0.5 },
    { jitter: 'some' },
    { initialMs: 6_000 },
    { maxMs: 1.5 },
  ],
  retryableStatuses: [503, [400], [401], [422], [600], [399], ['503'], [1.5], null, {}],
  retryAfter: [{ maxMs: -1 }, { maxMs: 'x' }, { minMs: 1 }, null, MAX],
  // Client-wide: refused whatever the value.
  health: [{}, { failoverAfter: 2 }],
  retryBudget: [{ percent: 10 }],
  durable: [{}],
  idempotency: [{ header: 'x-key' }],
  attemptHeader: ['x-attempt', false],
  cache: [{ maxAgeMs: 1 }],
  // Not an option at all.
  attempt: [{ max: 1 }],
};
const PARTS = Object.keys(INVALID);

const oneInvalid = fc.tuple(validPolicy, fc.constantFrom(...PARTS), fc.nat()).map(([policy, part, i]) => ({
  policy: { ...policy, [part]: INVALID[part]![i % INVALID[part]!.length] },
  part,
}));

const anyValue = fc.oneof(
  fc.anything({
    withBigInt: true,
    withNullPrototype: true,
    withMap: true,
    withSet: true,
    withTypedArray: true,
  }),
  fc.constantFrom(Symbol('x'), () => 1, Object.create(null) as object),
);
const arbitraryPolicy = fc.oneof(
  anyValue,
  fc.dictionary(fc.constantFrom(...PARTS, 'budget-ms'), anyValue, { maxKeys: 4 }),
  fc.tuple(validPolicy, fc.dictionary(fc.constantFrom(...PARTS), anyValue, { maxKeys: 2 })).map(([a, b]) => ({
    ...a,
    ...b,
  })),
);

/** The error names `request.policy` or a field inside it, and is a RequestError. */
function expectPolicyError(error: unknown, part?: string) {
  expect(error).toBeInstanceOf(RequestError);
  const { field, message } = error as RequestError;
  expect(field).toMatch(part === undefined ? /^policy($|[.[])/ : new RegExp(`^policy\\.${part}($|[.[])`));
  expect(message.startsWith(`request.${field}: `)).toBe(true);
}

describe('request policies under arbitrary input', () => {
  it('proceeds for every policy made of valid values, within the attempts it allows', async () => {
    await fc.assert(
      fc.asyncProperty(validPolicy, async (policy) => {
        const { client, run } = setUp();
        const result = await run({ path: '/x', policy });
        expect(result).toHaveProperty('outcome');
        const { attempts } = (result as { outcome: { attempts: number } }).outcome;
        expect(attempts).toBeLessThanOrEqual((policy.attempts as { max: number } | undefined)?.max ?? 3);
        await client.close();
      }),
      { seed: 31, numRuns: 200 },
    );
  });

  it('rejects each invalid part with a RequestError naming it, sending nothing', async () => {
    await fc.assert(
      fc.asyncProperty(oneInvalid, async ({ policy, part }) => {
        const { client, run } = setUp();
        const result = await run({ path: '/x', policy });
        expect(result).toHaveProperty('error');
        expectPolicyError((result as { error: unknown }).error, part);
        expect(result.calls).toBe(0);
        await client.close();
      }),
      { seed: 31, numRuns: 300 },
    );
  });

  it('either proceeds or rejects with a RequestError naming request.policy, whatever the values', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryPolicy, async (policy) => {
        const { client, run } = setUp();
        const result = await run({ path: '/x', policy: policy as FailoverRequest['policy'] });
        expect(result).not.toHaveProperty('hung');
        if ('error' in result) expectPolicyError(result.error);
        await client.close();
      }),
      { seed: 31, numRuns: 300 },
    );
  });
});

/** The issues `routes` is refused with, or `[]` when a client is made. */
function routeIssues(routes: unknown): readonly { path: string; message: string }[] {
  try {
    void createFailoverClient({
      origins: [{ id: 'primary', url: 'https://api.example.test' }],
      clock: simulatedClock(),
      transport: scriptedTransport(simulatedClock(), [{ reply: respond(200) }]),
      routes: routes as NonNullable<FailoverClientOptions['routes']>,
    }).close();
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(PolicyError);
    return (error as PolicyError).issues;
  }
}

const INVALID_ROUTE: Record<string, readonly unknown[]> = {
  id: ['', 5, null, {}],
  match: [
    null,
    '/v1',
    5,
    { host: 'x' },
    { method: 5 },
    { method: [] },
    { method: 'G T' },
    { path: 'v1' },
    { path: 5 },
  ],
  policy: [undefined, null, 5, { attempts: { max: 0 } }, { health: {} }, { backoff: { maxMs: -1 } }],
  extra: [1],
};

describe('routes under arbitrary input', () => {
  it('refuses a route with one invalid value, naming that route and field', () => {
    fc.assert(
      fc.property(
        fc.array(validPolicy, { minLength: 1, maxLength: 3 }),
        fc.constantFrom(...Object.keys(INVALID_ROUTE)),
        fc.nat(),
        fc.nat(),
        (policies, field, which, i) => {
          const routes: Record<string, unknown>[] = policies.map((policy) => ({ match: {}, policy }));
          const at = which % routes.length;
          routes[at]![field] = INVALID_ROUTE[field]![i % INVALID_ROUTE[field]!.length];
          const issues = routeIssues(routes);
          expect(issues.length).toBeGreaterThan(0);
          for (const issue of issues) expect(issue.path.startsWith(`routes[${at}].${field}`)).toBe(true);
        },
      ),
      { seed: 31, numRuns: 300 },
    );
  });

  it('either makes a client or throws a PolicyError under `routes`, whatever the values', () => {
    const arbitraryRoute = fc.oneof(
      anyValue,
      fc.record(
        {
          id: anyValue,
          match: fc.oneof(anyValue, fc.dictionary(fc.constantFrom('method', 'path'), anyValue)),
          policy: arbitraryPolicy,
        },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(fc.oneof(anyValue, fc.array(arbitraryRoute, { maxLength: 3 })), (routes) => {
        for (const issue of routeIssues(routes)) expect(issue.path).toMatch(/^routes($|[.[])/);
      }),
      { seed: 31, numRuns: 300 },
    );
  });
});
