import { describe, expect, it } from 'vitest';
import { keepSection, rateLimitedSection, rateLimitedTable } from '../../bench/fleet/rate-limited-doc.js';
import { runRateLimitedFleet } from '../../bench/fleet/rate-limited-run.js';
import { rateLimitedSvg } from '../../bench/fleet/rate-limited-svg.js';
import { LIMITED_DURATION_MS } from '../../bench/fleet/rate-limited-world.js';

// The rate-limited fleet (npm run bench:fleet) with a few heavy clients: its report's shape and what the throttle
// must show there, not its timing.
describe('rate-limited fleet simulator', () => {
  it('runs every client against every way of answering, the same figures for the same seed; failwise meets fewer 429s', async () => {
    const options = { clients: 5, limit: 50, seed: 3 };
    const first = await runRateLimitedFleet(options);
    const again = await runRateLimitedFleet(options);
    // The runs' figures (the report's real time aside) are the same.
    expect(again.runs).toEqual(first.runs);

    expect(first.runs.map((r) => `${r.variant} ${r.client}`)).toEqual([
      'bare failwise',
      'bare naive',
      'bare aws-standard',
      'retry-after failwise',
      'retry-after naive',
      'retry-after aws-standard',
      'ratelimit failwise',
      'ratelimit naive',
      'ratelimit aws-standard',
    ]);
    for (const run of first.runs) {
      expect(run.requests).toBe(first.runs[0]!.requests);
      expect(run.succeeded + run.failed).toBe(run.requests);
      expect(run.refusedPerSecond).toHaveLength(LIMITED_DURATION_MS / 1000);
      // The origin never admits more than its limit a second (its bucket holds one second's worth).
      for (const ok of run.okPerSecond.slice(1)) expect(ok).toBeLessThanOrEqual(2 * options.limit);
    }
    for (const variant of ['bare', 'retry-after', 'ratelimit']) {
      const of = (client: string) => first.runs.find((r) => r.variant === variant && r.client === client)!;
      // The naive client is refused most of the time; failwise slows down and is refused far less.
      expect(of('naive').refusedShare).toBeGreaterThan(0.5);
      expect(of('failwise').refusedShare).toBeLessThan(of('naive').refusedShare / 2);
      expect(of('failwise').attempts).toBeLessThan(of('naive').attempts);
      // No hold longer than retryAfter.maxHoldMs (5 min); none past the 10 s budget either.
      expect(of('failwise').longestHoldMs).toBeLessThan(10_000);
    }
    expect(rateLimitedTable(first)).toContain('429s after 1 s');
    const section = rateLimitedSection([first], { command: 'npm run bench:fleet', date: 'now' });
    expect(section).toContain('## 8. A fleet against a rate limit');
    expect(section).toContain('fleet-rate-limited.svg');
    const svg = rateLimitedSvg(first, 'retry-after');
    expect(svg.match(/<polyline/g)).toHaveLength(3);
  }, 120_000);

  it('a fleet of light clients (100 at 0.2 requests a second, twice the limit): failwise is refused about a fifth of the time', async () => {
    // Each client's send rate cannot bind at 0.2 a second; the quiet period after a throttle does (a light
    // client's is long: its next requests, and its retry of a bare 429, end throttled, nothing sent), and two
    // throttles running start one before a client has a pace. Seed 1: 0.193 bare, 0.246 with Retry-After (the
    // request a Retry-After answered comes back then, once), 0.140 with RateLimit fields. Without the quiet
    // period, over half; with it but only once a client has a pace, 0.259, 0.314 and 0.167.
    const report = await runRateLimitedFleet({ clients: 100, limit: 10, seed: 1 });
    const bounds: Record<string, number> = { bare: 0.23, 'retry-after': 0.28, ratelimit: 0.16 };
    for (const variant of ['bare', 'retry-after', 'ratelimit']) {
      const of = (client: string) => report.runs.find((r) => r.variant === variant && r.client === client)!;
      expect(of('naive').refusedShare).toBeGreaterThan(0.5);
      expect(of('failwise').refusedShare).toBeLessThan(bounds[variant]!);
      expect(of('failwise').goodput).toBeGreaterThan(0.85);
      expect(of('failwise').longestHoldMs).toBeLessThan(10_000);
    }
  }, 120_000);
});

describe('keepSection (what npm run bench keeps of docs/benchmarks.md)', () => {
  const start = '<!-- s:start -->';
  const end = '<!-- s:end -->';
  it('puts the section the old file had in place of the fresh one, or after the rest where the fresh has none', () => {
    const old = `# old\n\n${start}\nkept\n${end}\n\ntail`;
    expect(keepSection(`# fresh\n\n${start}\nnew\n${end}\n`, old, start, end)).toBe(
      `# fresh\n\n${start}\nkept\n${end}\n`,
    );
    expect(keepSection('# fresh\n', old, start, end)).toBe(`# fresh\n\n${start}\nkept\n${end}\n`);
  });

  it('leaves the fresh file as it is when the old one has no such section', () => {
    expect(keepSection('# fresh\n', '# old\n', start, end)).toBe('# fresh\n');
  });
});
