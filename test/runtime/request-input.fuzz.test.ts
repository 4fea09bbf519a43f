/*
 * Every field of `client.request` under arbitrary values. Three properties, fixed
 * seeds (a failure names its seed and the shrunk request):
 *
 * - a request made only of valid values proceeds: it resolves with an Outcome;
 * - a request with one value from a written-out list of invalid ones rejects with a RequestError for that
 *   field, before anything is sent;
 * - a request with arbitrary values (fast-check's `anything`, bigints, symbols, cycles and null prototypes
 *   included) either resolves with an Outcome or rejects with a RequestError naming one of its fields: never
 *   a TypeError, never a hang.
 *
 * Every path carries a secret in its query, and no error message may repeat it.
 *
 * Headers alone, through `client.request` and `client.fetch`: arbitrary names and values (any string, control
 * characters and non-Latin-1 included) either go through or are refused with a RequestError naming the header
 * at fault (`request.headers["bad header"]`), never a host's TypeError, and never repeating a value.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { RequestError } from '../../src/errors/request-error.js';
import { PolicyError } from '../../src/errors/policy-error.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import type { FailoverRequest } from '../../src/runtime/prepare-request.js';
import { respond, scriptedTransport } from '../helpers/scripted-transport.js';

const SECRET = 's3cr3t-token';
const MAX = 2_147_483_647;

/** A fresh client (every reply 200) and a way to run one request on it to its end, or to a hang. */
function setUp() {
  const clock = simulatedClock();
  const transport = scriptedTransport(clock, [{ reply: respond(200) }]);
  const client = createFailoverClient({
    origins: [{ id: 'primary', url: 'https://api.example.test' }],
    clock,
    transport,
    random: () => 0.5,
  });
  /** What the request came to: `{ outcome }`, `{ error }`, or `{ hung: true }` when nothing settled it. */
  const run = async (request: unknown) => {
    let settled: { outcome: unknown } | { error: unknown } | undefined;
    const done = client.request(request as FailoverRequest).then(
      (outcome) => void (settled = { outcome }),
      (error: unknown) => void (settled = { error }),
    );
    // Durable and cached parts load with import(): turns of the event loop, not simulated time.
    for (let round = 0; round < 200 && settled === undefined; round++) {
      await clock.runAll();
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (settled === undefined) return { hung: true as const, calls: transport.calls.length };
    await done;
    return { ...settled, calls: transport.calls.length };
  };
  return { client, clock, transport, run };
}

const FIELDS = [
  'method',
  'path',
  'headers',
  'body',
  'lifetime',
  'orderKey',
  'replaceKey',
  'cacheKey',
  'idempotencyKey',
  'idempotent',
  'deadlineMs',
  'signal',
] as const;
type Field = (typeof FIELDS)[number];

const token = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/);
const printable = fc.stringMatching(/^[!-~][ -~]{0,20}$/);

/** A valid request: the fields that depend on each other (lifetime, method, body, keys) chosen together. */
const validRequest: fc.Arbitrary<Record<string, unknown>> = fc
  .record({
    lifetime: fc.constantFrom(undefined, 'interactive', 'durable', 'cached'),
    readMethod: fc.constantFrom(undefined, 'GET', 'HEAD', 'get'),
    writeMethod: fc.constantFrom('POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'post'),
    write: fc.boolean(),
    segments: fc.array(fc.stringMatching(/^[a-zA-Z0-9._~-]{1,8}$/), { maxLength: 3 }),
    headers: fc.oneof(
      fc.constant(undefined),
      fc.dictionary(token, printable, { maxKeys: 3 }),
      fc.array(fc.tuple(token, printable), { maxLength: 3 }),
      fc.dictionary(token, printable, { maxKeys: 2 }).map((record) => new Headers(record)),
    ),
    body: fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.string(),
      fc.uint8Array({ maxLength: 8 }),
      fc.uint8Array({ maxLength: 8 }).map((bytes) => bytes.buffer),
      fc.uint8Array({ maxLength: 8 }).map((bytes) => new DataView(bytes.buffer)),
      fc.dictionary(token, fc.string(), { maxKeys: 2 }).map((record) => new URLSearchParams(record)),
    ),
    idempotencyKey: fc.oneof(fc.constant(undefined), fc.constant('auto'), printable),
    idempotent: fc.constantFrom(undefined, true, false),
    deadlineMs: fc.oneof(fc.constant(undefined), fc.integer({ min: 1, max: MAX })),
    signal: fc.constantFrom<'none' | 'live' | 'aborted'>('none', 'live', 'aborted'),
    orderKey: fc.option(printable, { nil: undefined }),
    replaceKey: fc.option(printable, { nil: undefined }),
    cacheKey: fc.option(printable, { nil: undefined }),
  })
  .map((v) => {
    // A cached request is a read; a durable one carries no credentials (none of the tokens above is one).
    const write = v.write && v.lifetime !== 'cached';
    const request: Record<string, unknown> = {
      method: write ? v.writeMethod : v.readMethod,
      path: `/${v.segments.join('/')}?token=${SECRET}&page=2`,
      headers: v.headers,
      body: write ? v.body : undefined,
      lifetime: v.lifetime,
      idempotencyKey: v.idempotencyKey,
      idempotent: v.idempotent,
      deadlineMs: v.deadlineMs,
      signal:
        v.signal === 'live'
          ? new AbortController().signal
          : v.signal === 'aborted'
            ? AbortSignal.abort()
            : undefined,
      orderKey: v.lifetime === 'durable' ? v.orderKey : undefined,
      replaceKey: v.lifetime === 'durable' ? v.replaceKey : undefined,
      cacheKey: v.lifetime === 'cached' ? v.cacheKey : undefined,
    };
    // A field left undefined is also a field left out: both happen in apps.
    for (const key of Object.keys(request)) if (request[key] === undefined && v.write) delete request[key];
    return request;
  });

/** Values each field refuses whatever the other fields are, written out (not taken from the code under test). */
const INVALID: Record<Field, readonly unknown[]> = {
  method: [5, '', 'GE T', 'GET\r\n', Symbol('GET'), {}, ['GET'], true, Object.create(null)],
  path: ['x', '', '//evil.example', 'no-slash?token=' + SECRET, 5, null, {}, ['/'], Symbol('/'), 10n],
  headers: [5, 'x', null, [['a']], { 'bad name': 'v' }, { a: 'v\nw' }, { a: '€' }, true],
  body: [5, {}, true, new Blob(['x']), new ReadableStream(), new FormData()],
  lifetime: ['forever', '', 5, null, true, 'Durable'],
  orderKey: ['', 5, null, {}],
  replaceKey: ['', 5, null, {}],
  cacheKey: ['', 5, null, {}],
  idempotencyKey: ['', '   ', 'a\nb', 'é', 5, null, true, {}],
  idempotent: ['true', 1, 0, null, {}],
  deadlineMs: ['1000', true, [5], 0, -1, 1.5, Number.NaN, Infinity, MAX + 1, 1e12, null, 10n, {}],
  signal: [{}, null, 5, 'abort', { addEventListener() {} }, true],
};

/** A valid request with one field set to one of its invalid values. */
const oneInvalid = fc.tuple(validRequest, fc.constantFrom(...FIELDS), fc.nat()).map(([request, field, i]) => {
  const values = INVALID[field];
  const bad = { ...request, [field]: values[i % values.length] };
  // orderKey and cacheKey are checked against their lifetime first; give them theirs.
  if (field === 'orderKey' || field === 'replaceKey') bad.lifetime = 'durable';
  if (field === 'cacheKey') Object.assign(bad, { lifetime: 'cached', method: 'GET', body: undefined });
  if (field === 'body') Object.assign(bad, { method: 'POST', lifetime: undefined });
  if (field === 'path' && bad.lifetime === 'cached') bad.lifetime = undefined;
  if (bad.path === undefined) bad.path = '/x';
  // Keys that only a durable or a cached request may have go with a changed lifetime.
  if (field !== 'orderKey' && bad.lifetime !== 'durable') delete bad.orderKey;
  if (field !== 'replaceKey' && bad.lifetime !== 'durable') delete bad.replaceKey;
  if (field !== 'cacheKey' && bad.lifetime !== 'cached') delete bad.cacheKey;
  return { request: bad, field };
});

/** Anything at all for some of the fields of a valid request (and sometimes a field that does not exist). */
const anyValue = fc.oneof(
  fc.anything({
    withBigInt: true,
    withNullPrototype: true,
    withMap: true,
    withSet: true,
    withTypedArray: true,
  }),
  fc.constantFrom(
    Symbol('x'),
    () => 1,
    Object.create(null),
    (() => {
      const cycle: Record<string, unknown> = {};
      cycle.self = cycle;
      return cycle;
    })(),
  ),
);
const arbitraryRequest = fc
  .tuple(validRequest, fc.dictionary(fc.constantFrom(...FIELDS, 'bodyy'), anyValue, { maxKeys: 4 }))
  .map(([request, overrides]) => ({ ...request, ...overrides }));

/**
 * Whether `error` names the field as RequestError does (a header inside `headers` counts as `headers`; `''` is
 * the request itself), and repeats no secret.
 */
function expectRequestError(error: unknown, fields: readonly string[]) {
  expect(error).toBeInstanceOf(RequestError);
  const { field, message } = error as RequestError;
  expect(fields).toContain(field.replace(/^headers\[.*$/s, 'headers'));
  expect(message.startsWith(field === '' ? 'request: ' : `request.${field}: `)).toBe(true);
  expect(message).not.toContain(SECRET);
}

describe('client.request under arbitrary input', () => {
  it('proceeds for every request made of valid values', async () => {
    await fc.assert(
      fc.asyncProperty(validRequest, async (request) => {
        const { client, run } = setUp();
        const result = await run(request);
        expect(result).not.toHaveProperty('hung');
        expect(result).not.toHaveProperty('error');
        const outcome = (result as { outcome: { status: string } }).outcome;
        expect(['succeeded', 'failed', 'deferred']).toContain(outcome.status);
        await client.close();
      }),
      { seed: 11, numRuns: 300 },
    );
  });

  it('rejects each invalid value with a RequestError naming its field, sending nothing', async () => {
    await fc.assert(
      fc.asyncProperty(oneInvalid, async ({ request, field }) => {
        const { client, run } = setUp();
        const result = await run(request);
        expect(result).toHaveProperty('error');
        expectRequestError((result as { error: unknown }).error, [field]);
        expect(result.calls).toBe(0);
        await client.close();
      }),
      { seed: 11, numRuns: 300 },
    );
  });

  it('either proceeds or rejects with a RequestError naming a field, whatever the values', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryRequest, async (request) => {
        const { client, run } = setUp();
        const result = await run(request);
        expect(result).not.toHaveProperty('hung');
        if ('error' in result) expectRequestError(result.error, [...FIELDS, 'bodyy', '']);
        else
          expect(['succeeded', 'failed', 'deferred']).toContain(
            (result as { outcome: { status: string } }).outcome.status,
          );
        await client.close();
      }),
      { seed: 11, numRuns: 300 },
    );
  });

  it('rejects a request that is not an object, saying what it got (a string only by its kind)', async () => {
    const cases: [unknown, string][] = [
      [undefined, 'got undefined'],
      [null, 'got null'],
      [5, 'got 5'],
      [`/x?token=${SECRET}`, 'got a string'],
      [Symbol('x'), 'got a symbol'],
    ];
    for (const [request, got] of cases) {
      const { client, run } = setUp();
      const { error } = (await run(request)) as { error: RequestError };
      expectRequestError(error, ['']);
      expect(error.message).toBe(`request: expected an object ({ path, ... }), ${got}`);
      await client.close();
    }
  });
});

/** What `client.fetch` came to on a client like setUp's: `{ response }` or `{ error }`, and the sends made. */
async function runFetch(init: RequestInit) {
  const { client, clock, transport } = setUp();
  const done = client.fetch(`/x?token=${SECRET}`, init).then(
    (response) => ({ response }),
    (error: unknown) => ({ error }),
  );
  await clock.runAll();
  const result = await done;
  await client.close();
  return { ...result, calls: transport.calls.length };
}

const NAME_RULE = "(a token: letters, digits and !#$%&'*+-.^_`|~)";
const VALUE_RULE = '(no CR, LF or NUL, and no character above U+00FF; the value is not shown)';

describe('headers', () => {
  it.each<[string, unknown, string]>([
    [
      'a name with a space',
      { 'bad header': '1' },
      `request.headers["bad header"]: not a valid header name ${NAME_RULE}`,
    ],
    ['an empty name', { '': '1' }, `request.headers[""]: not a valid header name ${NAME_RULE}`],
    [
      'a value with a line break',
      { 'x-a': `${SECRET}\r\nx-b: 1` },
      `request.headers["x-a"]: its value is not a valid header value ${VALUE_RULE}`,
    ],
    [
      'a value past Latin-1',
      { 'x-a': `€${SECRET}` },
      `request.headers["x-a"]: its value is not a valid header value ${VALUE_RULE}`,
    ],
    [
      'a pair with a bad name',
      [
        ['x-a', '1'],
        ['x b', '2'],
      ],
      `request.headers[1]: its name is not a valid header name ${NAME_RULE}`,
    ],
    [
      'a pair with a bad value',
      [['x-a', `\0${SECRET}`]],
      `request.headers[0]: its value is not a valid header value ${VALUE_RULE}`,
    ],
    ['a pair of one', [['x-a']], 'request.headers[0]: expected a [name, value] pair, got a list of 1'],
    ['a pair that is a string', [SECRET], 'request.headers[0]: expected a [name, value] pair, got a string'],
    [
      'a string',
      SECRET,
      'request.headers: expected a Headers object, a record of header names to values, or a list of [name, value] pairs, got a string',
    ],
    [
      'null',
      null,
      'request.headers: expected a Headers object, a record of header names to values, or a list of [name, value] pairs, got null',
    ],
  ])(
    'client.request and client.fetch refuse %s with a RequestError naming the header',
    async (_, headers, message) => {
      const { client, run } = setUp();
      const result = await run({ path: '/x', headers });
      expect((result as { error: RequestError }).error).toEqual(expect.any(RequestError));
      expect((result as { error: RequestError }).error.message).toBe(message);
      expect(result.calls).toBe(0);
      await client.close();

      // null is no headers at all to fetch (`new Headers(null)` would throw, but `init.headers ?? …` skips it).
      if (headers === null) return;
      const fetched = await runFetch({ headers: headers as HeadersInit });
      expect((fetched as { error: RequestError }).error).toEqual(expect.any(RequestError));
      expect((fetched as { error: RequestError }).error.message).toBe(message);
      expect(fetched.calls).toBe(0);
    },
  );

  /** A header name: mostly tokens, sometimes anything (spaces, colons, control characters, emoji). */
  const headerName = fc.oneof(token, fc.string({ unit: 'binary', maxLength: 6 }));
  /** A header value: mostly printable, sometimes anything, with the secret in it. */
  const headerValue = fc
    .oneof(printable, fc.string({ unit: 'binary', maxLength: 8 }))
    .map((value) => `${value}${SECRET}`);
  const anyHeaders = fc.oneof(
    fc.dictionary(headerName, headerValue, { maxKeys: 3 }),
    fc.array(fc.tuple(headerName, headerValue), { maxLength: 3 }),
  );

  /** A RequestError naming one of `headers` (by its name, or its place in the list), repeating no value. */
  const expectHeaderNamed = (error: unknown, headers: Record<string, string> | [string, string][]) => {
    expectRequestError(error, ['headers']);
    const { field, message } = error as RequestError;
    expect(message).not.toContain(SECRET);
    const at = /^headers\[(.*)\]$/s.exec(field)?.[1];
    expect(at).toBeDefined();
    if (Array.isArray(headers)) expect(Number(at)).toBeLessThan(headers.length);
    else expect(Object.keys(headers).map((name) => JSON.stringify(name))).toContain(at);
  };

  it('client.request takes any headers fetch takes, and names the one it refuses', async () => {
    await fc.assert(
      fc.asyncProperty(anyHeaders, async (headers) => {
        let hostRefuses = false;
        try {
          new Headers(headers);
        } catch {
          hostRefuses = true;
        }
        const { client, run } = setUp();
        const result = await run({ path: '/x', headers });
        await client.close();
        expect(result).not.toHaveProperty('hung');
        expect('error' in result).toBe(hostRefuses);
        if ('error' in result) expectHeaderNamed(result.error, headers);
      }),
      { seed: 29, numRuns: 300 },
    );
  });

  it("client.fetch refuses bad headers with the same RequestError, never the host's TypeError", async () => {
    await fc.assert(
      fc.asyncProperty(anyHeaders, async (headers) => {
        const result = await runFetch({ headers });
        if ('error' in result) expectHeaderNamed(result.error, headers);
        else expect(result.response.status).toBe(200);
      }),
      { seed: 29, numRuns: 300 },
    );
  });
});

describe('deadlineMs', () => {
  it.each([
    ['the string "1000"', '1000', 'got "1000"'],
    ['true', true, 'got true'],
    ['[5]', [5], 'got an array'],
    ['2^31, past the longest timer', MAX + 1, 'got 2147483648'],
    ['a fraction', 1.5, 'got 1.5'],
    ['0', 0, 'got 0'],
    ['NaN', Number.NaN, 'got NaN'],
    ['Infinity', Infinity, 'got Infinity'],
    ['a bigint', 1000n, 'got 1000n'],
  ])('refuses %s', async (_, deadlineMs, got) => {
    const { client, run } = setUp();
    const result = await run({ path: '/x', deadlineMs });
    expect((result as { error: Error }).error).toBeInstanceOf(RequestError);
    expect((result as { error: Error }).error.message).toBe(
      `request.deadlineMs: expected an integer from 1 to 2147483647 (ms), ${got}`,
    );
    expect(result.calls).toBe(0);
    await client.close();
  });

  it('takes 2147483647 ms on the system clock: the longest deadline does not end the request at once', async () => {
    // The real host timers: a deadline past 2^31 - 1 ms would fire at once there (Node warns, browsers too).
    for (const deadlineMs of [MAX, MAX - 1]) {
      const client = createFailoverClient({
        origins: [{ id: 'primary', url: 'https://api.example.test' }],
        transport: { name: 'instant', send: () => Promise.resolve(respond(204)) },
      });
      const outcome = await client.request({ path: '/x', deadlineMs });
      expect(outcome).toMatchObject({ status: 'succeeded', attempts: 1 });
      await client.close();
    }
  });
});

describe('policy durations past the longest timer', () => {
  it.each([
    'budgetMs',
    'timeouts.attemptMs',
    'timeouts.connectMs',
    'timeouts.idleMs',
    'backoff.initialMs',
    'backoff.maxMs',
    'retryAfter.maxMs',
    'health.windowMs',
    'health.minFailedOverMs',
    'health.maxFailedOverMs',
    'health.probeIntervalMs',
    'health.probeTimeoutMs',
    'durable.initialMs',
    'durable.maxMs',
    'durable.maxAgeMs',
    'cache.maxAgeMs',
  ])('refuses policy.%s = 2147483648 with a PolicyError naming it', (path) => {
    const [group, key] = path.split('.');
    const policy = key === undefined ? { [group!]: MAX + 1 } : { [group!]: { [key]: MAX + 1 } };
    const make = () =>
      createFailoverClient({ origins: [{ id: 'primary', url: 'https://api.example.test' }], policy });
    expect(make).toThrow(PolicyError);
    expect(make).toThrow(
      `policy.${path}: expected a number <= 2147483647 (the longest delay a timer can wait), got 2147483648`,
    );
  });
});

describe('paths in RequestError messages', () => {
  it('never repeat a query string or a fragment', async () => {
    const { client, run } = setUp();
    const cases: [unknown, string][] = [
      [{ path: `v1/x?token=${SECRET}` }, 'request.path: expected a path starting with "/", got "v1/x?…"'],
      [
        { path: `//evil.example/#${SECRET}` },
        'request.path: expected a path starting with "/", got "//evil.example/#…"',
      ],
    ];
    for (const [request, message] of cases) {
      const result = await run(request);
      expect((result as { error: Error }).error.message).toBe(message);
    }
    await client.close();
  });
});
