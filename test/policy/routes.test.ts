import { describe, expect, it } from 'vitest';
import { PolicyError } from '../../src/errors/policy-error.js';
import { defaultPolicy } from '../../src/policy/defaults.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { matchRoute, resolveRoutes } from '../../src/policy/routes.js';

const messageOf = (routes: unknown): string => {
  try {
    resolveRoutes(routes, defaultPolicy);
  } catch (error) {
    expect(error).toBeInstanceOf(PolicyError);
    return (error as Error).message;
  }
  throw new Error('no error');
};

describe('resolveRoutes', () => {
  it('no option, no routes', () => {
    expect(resolveRoutes(undefined, defaultPolicy)).toBeUndefined();
  });

  it('lays each route policy over the client policy, named by id or index', () => {
    const client = definePolicy({ attempts: { max: 4 }, budgetMs: 8_000 });
    const [payments, feed] = resolveRoutes(
      [
        { id: 'payments', match: { method: 'post', path: '/v1/payments' }, policy: { attempts: { max: 1 } } },
        { match: { path: /^\/v1\/feed/ }, policy: { backoff: { maxMs: 900 } } },
      ],
      client,
    )!;
    expect(payments).toMatchObject({ name: 'payments', methods: ['POST'], path: '/v1/payments' });
    expect(payments!.policy).toEqual({ ...client, attempts: { max: 1 } });
    expect(feed!.name).toBe(1);
    expect(feed!.policy).toEqual({ ...client, backoff: { ...client.backoff, maxMs: 900 } });
  });

  describe('messages, one per problem', () => {
    it('not an array', () => {
      expect(messageOf({})).toBe('routes: expected an array of { match, policy }, got an object');
    });
    it('a route that is not an object', () => {
      expect(messageOf([null])).toBe('routes[0]: expected an object { match, policy }, got null');
    });
    it('an unknown route field', () => {
      expect(messageOf([{ match: {}, policy: {}, name: 'x' }])).toBe('routes[0].name: unknown option');
    });
    it('an empty id', () => {
      expect(messageOf([{ id: '', match: {}, policy: {} }])).toBe(
        'routes[0].id: expected a non-empty string, got ""',
      );
    });
    it('a duplicate id', () => {
      expect(
        messageOf([
          { id: 'a', match: {}, policy: {} },
          { id: 'a', match: {}, policy: {} },
        ]),
      ).toBe('routes[1].id: duplicate route id "a"');
    });
    it('a match that is not an object', () => {
      expect(messageOf([{ match: '/v1', policy: {} }])).toBe(
        'routes[0].match: expected an object { method?, path? }, got "/v1"',
      );
    });
    it('an unknown match field', () => {
      expect(messageOf([{ match: { host: 'x' }, policy: {} }])).toBe('routes[0].match.host: unknown option');
    });
    it('a method that is not a method token', () => {
      expect(messageOf([{ match: { method: 'GET /' }, policy: {} }])).toBe(
        'routes[0].match.method: expected an HTTP method or a non-empty list of them, got "GET /"',
      );
    });
    it('an empty list of methods', () => {
      expect(messageOf([{ match: { method: [] }, policy: {} }])).toBe(
        'routes[0].match.method: expected an HTTP method or a non-empty list of them, got an array',
      );
    });
    it('a path that does not start with /', () => {
      expect(messageOf([{ match: { path: 'v1' }, policy: {} }])).toBe(
        'routes[0].match.path: expected a path prefix starting with "/" or a RegExp, got "v1"',
      );
    });
    it('a policy that is missing', () => {
      expect(messageOf([{ match: {} }])).toBe('routes[0].policy: expected an object, got undefined');
    });
    it('a bad policy field, by its path', () => {
      expect(
        messageOf([
          { match: {}, policy: {} },
          { match: {}, policy: { backoff: { maxMs: -1 } } },
        ]),
      ).toBe('routes[1].policy.backoff.maxMs: expected a number >= 0, got -1');
    });
    it('a client-wide part in a route policy', () => {
      expect(messageOf([{ match: {}, policy: { retryBudget: { percent: 1 } } }])).toBe(
        "routes[0].policy.retryBudget: client-wide: every request shares it, so only the client's policy sets it",
      );
    });
  });
});

describe('matchRoute', () => {
  const routes = resolveRoutes(
    [
      { id: 'pay', match: { method: ['POST', 'put'], path: '/v1/pay' }, policy: {} },
      { id: 'feed', match: { path: /^\/v1\/feed\/\d+$/g }, policy: {} },
      { id: 'reads', match: { method: 'GET' }, policy: {} },
    ],
    defaultPolicy,
  )!;
  const name = (method: string, path: string) => matchRoute(routes, method, path)?.name;

  it('the first route whose method and path both match', () => {
    expect(name('POST', '/v1/pay/42')).toBe('pay');
    expect(name('PUT', '/v1/payments')).toBe('pay');
    expect(name('GET', '/v1/pay/42')).toBe('reads');
    expect(name('DELETE', '/v1/pay/42')).toBeUndefined();
  });

  it('a RegExp is tested against the path without its query or fragment, every time from its start', () => {
    expect(name('POST', '/v1/feed/7?after=9')).toBe('feed');
    expect(name('POST', '/v1/feed/7?after=9')).toBe('feed');
    expect(name('POST', '/v1/feed/7#top')).toBe('feed');
    expect(name('POST', '/v1/feed/x')).toBeUndefined();
  });

  it('a prefix is matched against the path without its query', () => {
    const only = resolveRoutes([{ match: { path: '/a?b' }, policy: {} }], defaultPolicy)!;
    expect(matchRoute(only, 'GET', '/a?b')).toBeUndefined();
  });
});
