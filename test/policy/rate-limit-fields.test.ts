import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { createRequire } from 'node:module';
import { parseListParams, parseRateLimitFields } from '../../src/policy/rate-limit-fields.js';

const NOW = 1_000_000;

/** React Native's `Headers`: whatwg-fetch's (it ships no types). */
const WhatwgHeaders = (createRequire(import.meta.url)('whatwg-fetch') as { Headers: typeof Headers }).Headers;

/** A `get` over these fields (names lower-case, as `Headers` reads them). */
const fields = (values: Record<string, string>) => ({
  get: (name: string): string | null => values[name] ?? null,
});

describe('parseRateLimitFields', () => {
  it('reads the RateLimit field: r remaining, t seconds to the reset', () => {
    expect(parseRateLimitFields(fields({ ratelimit: '"default";r=0;t=30' }), NOW)).toEqual({
      remaining: 0,
      resetAt: 1_030_000,
    });
    // A token for the name, parameters in any order, spaces around members.
    expect(parseRateLimitFields(fields({ ratelimit: ' day ; t=5;r=12 ' }), NOW)).toEqual({
      remaining: 12,
      resetAt: 1_005_000,
    });
  });

  it('takes the policy that binds soonest: the fewest remaining, then the latest reset', () => {
    const value = '"hour";r=100;t=3000, "minute";r=3;t=40, "second";r=3;t=1';
    expect(parseRateLimitFields(fields({ ratelimit: value }), NOW)).toEqual({
      remaining: 3,
      resetAt: 1_040_000,
    });
  });

  it('adds the RateLimit-Policy quota, q per w seconds', () => {
    const got = parseRateLimitFields(
      fields({ ratelimit: '"default";r=5;t=10', 'ratelimit-policy': '"default";q=100;w=60' }),
      NOW,
    );
    expect(got).toEqual({ remaining: 5, resetAt: 1_010_000, policy: { limit: 100, windowMs: 60_000 } });
    // A policy alone names no remaining count: nothing to keep.
    expect(parseRateLimitFields(fields({ 'ratelimit-policy': '"default";q=100;w=60' }), NOW)).toBeUndefined();
    // w=0 is no window.
    expect(
      parseRateLimitFields(fields({ ratelimit: 'a;r=1;t=1', 'ratelimit-policy': 'a;q=1;w=0' }), NOW),
    ).toEqual({ remaining: 1, resetAt: 1_001_000 });
  });

  it('falls back to RateLimit-Remaining / -Reset, then X-RateLimit-Remaining / -Reset', () => {
    expect(
      parseRateLimitFields(fields({ 'ratelimit-remaining': '7', 'ratelimit-reset': '20' }), NOW),
    ).toEqual({ remaining: 7, resetAt: 1_020_000 });
    expect(
      parseRateLimitFields(fields({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '60' }), NOW),
    ).toEqual({ remaining: 0, resetAt: 1_060_000 });
    // The RateLimit field first when both are there.
    expect(
      parseRateLimitFields(
        fields({ ratelimit: 'd;r=1;t=2', 'x-ratelimit-remaining': '50', 'x-ratelimit-reset': '9' }),
        NOW,
      ),
    ).toEqual({ remaining: 1, resetAt: 1_002_000 });
  });

  it('reads React Native’s Headers (whatwg-fetch) in one pass, with no lookup by name; Node’s by name', () => {
    const cases: [Record<string, string>, unknown][] = [
      [{ 'content-type': 'application/json', date: 'x' }, undefined],
      [
        { RateLimit: '"default";r=0;t=30', Server: 'nginx' },
        { remaining: 0, resetAt: 1_030_000 },
      ],
      [
        { 'X-RateLimit-Remaining': '5', 'X-RateLimit-Reset': '60', 'x-request-id': 'r' },
        { remaining: 5, resetAt: 1_060_000 },
      ],
      [
        { 'ratelimit-remaining': '7', 'ratelimit-reset': '20', 'ratelimit-policy': '"default";q=100;w=60' },
        { remaining: 7, resetAt: 1_020_000, policy: { limit: 100, windowMs: 60_000 } },
      ],
      // A reset alone is no reading.
      [{ 'x-ratelimit-reset': '60' }, undefined],
    ];
    for (const [values, expected] of cases) {
      const whatwg = new WhatwgHeaders(values);
      const lookup = vi.spyOn(whatwg, 'get');
      expect(parseRateLimitFields(whatwg, NOW)).toEqual(expected);
      expect(lookup).not.toHaveBeenCalled();
      const node = new Headers(values);
      const byName = vi.spyOn(node, 'get');
      expect(parseRateLimitFields(node, NOW)).toEqual(expected);
      expect(byName).toHaveBeenCalled();
    }
  });

  it('reads a reset of 1,704,067,200 or more as epoch seconds, as ky does', () => {
    // 2024-01-01T00:00:00Z exactly, and one second later.
    const at = Date.UTC(2024, 0, 1);
    expect(
      parseRateLimitFields(fields({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1704067200' }), NOW),
    ).toEqual({ remaining: 0, resetAt: at });
    expect(
      parseRateLimitFields(fields({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1704067201' }), NOW),
    ).toEqual({ remaining: 0, resetAt: at + 1_000 });
    // One second less is a delay (about 54 years of it).
    expect(
      parseRateLimitFields(fields({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1704067199' }), NOW)
        ?.resetAt,
    ).toBe(NOW + 1_704_067_199_000);
  });

  it('refuses malformed values', () => {
    const malformed = [
      { ratelimit: '' },
      { ratelimit: 'r=1;t=2' },
      { ratelimit: '"default";r=-1;t=30' },
      { ratelimit: '"default";r=1.5;t=30' },
      { ratelimit: '"default";r=1' },
      { ratelimit: '"default";t=30' },
      { ratelimit: '"unterminated;r=1;t=2' },
      { ratelimit: '"default";R=1;t=2' },
      { ratelimit: '1abc;r=1;t=2' },
      { 'x-ratelimit-remaining': '5' },
      { 'x-ratelimit-reset': '5' },
      { 'x-ratelimit-remaining': 'five', 'x-ratelimit-reset': '5' },
      { 'x-ratelimit-remaining': '5', 'x-ratelimit-reset': '-5' },
      { 'x-ratelimit-remaining': '5', 'x-ratelimit-reset': 'Wed, 21 Oct 2015 07:28:00 GMT' },
      { 'x-ratelimit-remaining': '1e3', 'x-ratelimit-reset': '5' },
    ];
    for (const values of malformed)
      expect(parseRateLimitFields(fields(values), NOW), JSON.stringify(values)).toBeUndefined();
  });

  it('reads any r and t written as digits, and never throws on any text', () => {
    fc.assert(
      fc.property(fc.nat(1_000_000), fc.nat(100_000), (r, t) => {
        expect(parseRateLimitFields(fields({ ratelimit: `"q";r=${r};t=${t}` }), NOW)).toEqual({
          remaining: r,
          resetAt: NOW + t * 1000,
        });
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (a, b, c) => {
        const got = parseRateLimitFields(
          fields({ ratelimit: a, 'x-ratelimit-remaining': b, 'x-ratelimit-reset': c }),
          NOW,
        );
        if (got !== undefined) {
          expect(Number.isInteger(got.remaining) && got.remaining >= 0).toBe(true);
          expect(Number.isFinite(got.resetAt)).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('parseListParams reads a structured-field list of members with integer parameters', () => {
    expect(parseListParams('"a";r=1;t=2, b;q=3;flag')).toEqual([{ r: 1, t: 2 }, { q: 3 }]);
    expect(parseListParams('"a";r=x')).toEqual([{}]);
    expect(parseListParams('a;=1')).toBeUndefined();
  });
});
