import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import type { DecisionEventType } from '../../src/runtime/decision-events.js';
import type {
  DrillReport,
  ScenarioReport,
  ScenarioTimeline,
  TimelineAttempt,
  TimelineEvent,
  TimelineServed,
  TimelineWait,
} from '../../src/drill/drill-report.js';
import { renderHtmlReport } from '../../src/drill/html-report.js';
import { tickLabel, tickStepMs } from '../../src/drill/html-timeline.js';

// The drill's HTML report, rendered from hand-built reports: one element per attempt, request seen, health
// band, wait and mark; every string escaped; nothing that could make the page fetch anything.

function scenario(
  name: string,
  overrides: Partial<ScenarioReport> & { timeline: ScenarioTimeline },
): ScenarioReport {
  const { timeline } = overrides;
  return {
    name,
    title: `Title of ${name}`,
    expected: `what ${name} expects`,
    verdict: 'pass',
    checks: [{ label: `${name} check`, pass: true }],
    decided: {
      requests: new Set(timeline.attempts.map((attempt) => attempt.requestId)).size,
      attempts: timeline.attempts.length,
      waitsMs: timeline.waits.map((wait) => wait.to - wait.from),
      origins: [...new Set(timeline.attempts.map((attempt) => attempt.origin))],
      outcomes: ['succeeded'],
    },
    seen: timeline.origins.map((origin) => ({
      origin,
      requests: timeline.served.filter((served) => served.origin === origin).length,
      probes: timeline.served.filter((served) => served.origin === origin && served.probe).length,
      writesApplied: timeline.served.filter((served) => served.origin === origin && served.applied).length,
    })),
    realMs: 12,
    ...overrides,
  };
}

const attempt = (
  requestId: string,
  n: number,
  startAt: number,
  endAt: number,
  result: string,
  origin = 'primary',
): TimelineAttempt => ({
  requestId,
  origin,
  method: 'GET',
  path: '/v1/items',
  attempt: n,
  startAt,
  endAt,
  result,
});

const served = (at: number, reply: string, extra: Partial<TimelineServed> = {}): TimelineServed => ({
  origin: 'primary',
  at,
  method: 'GET',
  path: '/v1/items',
  reply,
  applied: false,
  probe: false,
  ...extra,
});

/** An event of request r1, or a health change; `extra` may set any field (the renderer shows what is there). */
const event = (type: DecisionEventType, at: number, extra: Record<string, unknown> = {}): TimelineEvent =>
  (type === 'health-changed'
    ? { type, from: 'healthy', to: 'suspect', criterion: 'consecutive-failures', at, ...extra }
    : {
        type,
        requestId: 'r1',
        origin: 'primary',
        host: '127.0.0.1:1',
        method: 'GET',
        path: '/v1/items',
        attempt: 1,
        elapsedMs: at,
        at,
        ...extra,
      }) as TimelineEvent;

/** Passes: a timeout, a backoff wait, a 503 with Retry-After, a failover, probes, an applied write, marks. */
const failover = scenario('failover', {
  timeline: {
    durationMs: 60_000,
    origins: ['primary', 'backup'],
    attempts: [
      attempt('r1', 1, 0, 5_000, 'response-timeout'),
      attempt('r1', 2, 5_125, 5_130, 'unavailable 503'),
      attempt('r1', 3, 7_130, 7_140, 'ok', 'backup'),
      attempt('r2', 1, 7_135, 7_150, 'ok', 'backup'),
    ],
    health: [
      { state: 'healthy', activeOrigin: 'primary', from: 0, to: 5_130 },
      { state: 'failedOver', activeOrigin: 'backup', from: 5_130, to: 40_000 },
      { state: 'probingFailback', activeOrigin: 'backup', from: 40_000, to: 50_000 },
      { state: 'healthy', activeOrigin: 'primary', from: 50_000, to: 60_000 },
    ],
    waits: [
      { requestId: 'r1', origin: 'primary', from: 5_000, to: 5_125 },
      { requestId: 'r1', origin: 'primary', from: 5_130, to: 7_130, retryAfterMs: 2_000 },
    ],
    served: [
      served(0, 'hang'),
      served(5_125, '503 retry-after 2'),
      served(7_130, '200', { origin: 'backup' }),
      served(7_135, '201 applied', { origin: 'backup', method: 'POST', applied: true }),
      served(40_000, '200', { method: 'HEAD', path: '/', probe: true }),
      served(45_000, '200', { method: 'HEAD', path: '/', probe: true }),
    ],
    events: [
      event('attempt-started', 0),
      event('attempt-failed', 5_000, { failureClass: 'response-timeout' }),
      event('retry-scheduled', 5_000, { failureClass: 'response-timeout', delayMs: 125 }),
      event('retry-scheduled', 5_130, {
        failureClass: 'unavailable',
        status: 503,
        delayMs: 2_000,
        retryAfterMs: 2_000,
      }),
      event('health-changed', 5_130, {
        from: 'healthy',
        to: 'failedOver',
        criterion: 'consecutive-failures',
      }),
      event('succeeded', 7_140, { origin: 'backup', attempt: 3 }),
    ],
    marks: [
      { at: 4_000, label: 'primary down' },
      { at: 30_000, label: 'primary back' },
    ],
  },
});

/** Fails: one check fails, and the scenario threw. */
const broken = scenario('broken', {
  verdict: 'fail',
  checks: [
    { label: 'the write was applied once', pass: false, detail: 'applied 2' },
    { label: 'the origin saw 2 requests', pass: true },
  ],
  error: 'drill: the origin never answered',
  timeline: {
    durationMs: 1_500,
    origins: ['primary'],
    attempts: [attempt('r1', 1, 0, 1_500, 'unfinished')],
    health: [{ state: 'healthy', activeOrigin: 'primary', from: 0, to: 1_500 }],
    waits: [],
    served: [served(0, 'hang')],
    events: [event('attempt-started', 0)],
    marks: [],
  },
});

/** Took no simulated time: 3 concurrent requests answered 401 then 200, all at 0 ms; one silent origin. */
const instant = scenario('instant', {
  timeline: {
    durationMs: 0,
    origins: ['primary', 'silent'],
    attempts: ['a', 'b', 'c'].flatMap((id) => [
      attempt(id, 1, 0, 0, 'unauthorized 401'),
      attempt(id, 2, 0, 0, 'ok'),
    ]),
    health: [{ state: 'healthy', activeOrigin: 'primary', from: 0, to: 0 }],
    waits: [],
    served: [
      served(0, '401'),
      served(0, '401'),
      served(0, '401'),
      served(0, '200'),
      served(0, '200'),
      served(0, '200'),
    ],
    events: [],
    marks: [],
  },
});

/** 400 requests over 10 simulated minutes, each with a wait and a probe now and then: the flapping shape. */
const many = (() => {
  const attempts: TimelineAttempt[] = [];
  const waits: TimelineWait[] = [];
  const seen: TimelineServed[] = [];
  const events: TimelineEvent[] = [];
  for (let i = 0; i < 400; i++) {
    const at = i * 1_500;
    const origin = Math.floor(i / 50) % 2 === 0 ? 'primary' : 'backup';
    attempts.push(attempt(`r${i}`, 1, at, at + 3, i % 4 === 0 ? 'connect' : 'ok', origin));
    seen.push(served(at, '200', { origin }));
    if (i % 4 === 0) waits.push({ requestId: `r${i}`, origin, from: at + 3, to: at + 128 });
    if (i % 10 === 0) seen.push(served(at + 700, '200', { method: 'HEAD', path: '/', probe: true }));
    events.push(event('attempt-started', at, { requestId: `r${i}`, origin }));
    events.push(event('succeeded', at + 3, { requestId: `r${i}`, origin }));
  }
  return scenario('many-attempts', {
    timeline: {
      durationMs: 600_000,
      origins: ['primary', 'backup'],
      attempts,
      health: Array.from({ length: 20 }, (_, k) => ({
        state: k % 2 === 0 ? 'healthy' : 'failedOver',
        activeOrigin: k % 2 === 0 ? 'primary' : 'backup',
        from: k * 30_000,
        to: (k + 1) * 30_000,
      })),
      waits,
      served: seen,
      events,
      marks: [{ at: 0, label: 'flapping starts' }],
    },
  });
})();

const report = (scenarios: ScenarioReport[]): DrillReport => ({
  startedAt: '2026-05-01T12:00:00.000Z',
  node: 'v20.20.2',
  passed: scenarios.filter((s) => s.verdict === 'pass').length,
  failed: scenarios.filter((s) => s.verdict === 'fail').length,
  realMs: 4_321,
  scenarios,
});

const all = [failover, broken, instant, many];
const html = renderHtmlReport(report(all));

/** The HTML of one scenario's section (sections do not nest; summary rows carry no data-verdict). */
function sectionOf(page: string, name: string): string {
  const at = page.indexOf(`data-scenario="${name}" data-verdict=`);
  expect(at, `section ${name}`).toBeGreaterThan(-1);
  return page.slice(at, page.indexOf('</section>', at));
}

const count = (text: string, pattern: RegExp): number => text.match(pattern)?.length ?? 0;
const tags = (text: string, kind: string): string[] =>
  text.match(new RegExp(`<[a-z]+ data-kind="${kind}"[^>]*>`, 'g')) ?? [];
const numberAttr = (tag: string, name: string): number =>
  Number(new RegExp(` ${name}="([^"]*)"`).exec(tag)?.[1]);

describe('renderHtmlReport', () => {
  it('states the totals, when the drill ran, on which Node, and how long it really took', () => {
    const header = html.slice(html.indexOf('<header'), html.indexOf('</header>'));
    expect(header).toContain('data-kind="passed">3 passed<');
    expect(header).toContain('data-kind="failed">1 failed<');
    expect(header).toContain('of 4 scenarios');
    expect(header).toContain('2026-05-01T12:00:00.000Z');
    expect(header).toContain('v20.20.2');
    expect(header).toContain('4.321 s');
  });

  it('links each summary row to its scenario section', () => {
    const rows = tags(html, 'summary-row');
    expect(rows).toHaveLength(all.length);
    const links = [...html.matchAll(/<tr data-kind="summary-row"[^>]*>\s*<td><a href="#([^"]+)">/g)].map(
      (m) => m[1],
    );
    expect(links).toHaveLength(all.length);
    for (const [index, id] of links.entries()) {
      expect(html).toContain(`<section class="scenario" id="${id}" data-scenario="${all[index]?.name}"`);
    }
  });

  it('draws one element per attempt, request seen, health band, wait and mark', () => {
    for (const { name, timeline } of all) {
      const section = sectionOf(html, name);
      expect(tags(section, 'attempt'), name).toHaveLength(timeline.attempts.length);
      expect(tags(section, 'served'), name).toHaveLength(timeline.served.length);
      expect(tags(section, 'band'), name).toHaveLength(timeline.health.length);
      expect(tags(section, 'wait'), name).toHaveLength(timeline.waits.length);
      expect(tags(section, 'mark'), name).toHaveLength(timeline.marks.length);
      expect(tags(section, 'event'), name).toHaveLength(timeline.events.length);
      expect(count(section, /data-kind="timeline"/g), name).toBe(1);
    }
  });

  it('tells probes, applied writes and Retry-After waits apart, and colours attempts by result', () => {
    const section = sectionOf(html, 'failover');
    expect(count(section, /data-served="probe"/g)).toBe(2);
    expect(count(section, /data-served="applied"/g)).toBe(1);
    expect(count(section, /data-served="request"/g)).toBe(3);
    expect(count(section, /data-kind="wait" data-retry-after="true"/g)).toBe(1);
    expect(tags(section, 'attempt').map((tag) => /class="a ([^"]+)"/.exec(tag)?.[1])).toEqual([
      'r-response-timeout',
      'r-unavailable',
      'r-ok',
      'r-ok',
    ]);
    expect(section).toContain('Retry-After wait (server asked 2000 ms)');
    expect(section).toContain('healthy → failedOver');
  });

  it('shows a failing check with its detail and the error the scenario threw', () => {
    const section = sectionOf(html, 'broken');
    expect(section).toContain('data-verdict="fail"');
    expect(section).toMatch(
      /data-kind="check" data-pass="false"[^>]*>.*the write was applied once.*applied 2/,
    );
    expect(count(section, /data-kind="check" data-pass="true"/g)).toBe(1);
    expect(section).toMatch(/data-kind="error".*drill: the origin never answered/s);
    expect(sectionOf(html, 'failover')).not.toContain('data-kind="error"');
  });

  it('draws a scenario that took no simulated time in attempt order, with the 0 tick alone', () => {
    const section = sectionOf(html, 'instant');
    expect(tags(section, 'tick')).toHaveLength(1);
    expect(section).toContain('Everything happened at 0 ms');
    const bars = tags(section, 'attempt');
    for (const bar of bars) expect(numberAttr(bar, 'width')).toBeGreaterThan(1);
    // The 3 concurrent requests get a row each; attempt 2 sits right of attempt 1 in the same row.
    const rowsOf = (n: number) =>
      bars.filter((_, index) => index % 2 === n).map((bar) => numberAttr(bar, 'y'));
    expect(new Set(rowsOf(0)).size).toBe(3);
    expect(rowsOf(1)).toEqual(rowsOf(0));
    expect(numberAttr(bars[1] ?? '', 'x')).toBeGreaterThan(numberAttr(bars[0] ?? '', 'x'));
    expect(section).toContain('no attempt went here and the origin saw no request');
  });

  it('keeps hundreds of attempts over 10 minutes in view, at least 1px wide, in a small file', () => {
    const section = sectionOf(html, 'many-attempts');
    const svg = /<svg data-kind="timeline"[^>]* viewBox="0 0 (\d+) (\d+)"/.exec(section);
    const width = Number(svg?.[1]);
    for (const bar of tags(section, 'attempt')) {
      expect(numberAttr(bar, 'width')).toBeGreaterThanOrEqual(1);
      expect(numberAttr(bar, 'x') + numberAttr(bar, 'width')).toBeLessThanOrEqual(width);
    }
    // Sequential requests share one row per origin: the lanes stay short.
    expect(new Set(tags(section, 'attempt').map((bar) => numberAttr(bar, 'y'))).size).toBe(2);
    expect(Number(svg?.[2])).toBeLessThan(200);
    expect(section).toContain('>2 min<');
    const drawn = many.timeline.attempts.length + many.timeline.served.length + many.timeline.events.length;
    expect(section.length / drawn).toBeLessThan(220);
  });

  it('escapes every string from the report', () => {
    const hostile = (field: string) => `<script>alert("${field}")</script> & 'x' &amp; </svg>`;
    const escaped = (field: string) =>
      hostile(field)
        .replaceAll('&', '&amp;')
        .replaceAll('<', '&lt;')
        .replaceAll('>', '&gt;')
        .replaceAll('"', '&quot;')
        .replaceAll("'", '&#39;');
    const origin = hostile('origin');
    const timeline: ScenarioTimeline = {
      durationMs: 1_000,
      origins: [origin],
      attempts: [
        {
          requestId: hostile('attempt.requestId'),
          origin,
          method: hostile('attempt.method'),
          path: hostile('attempt.path'),
          attempt: 1,
          startAt: 0,
          endAt: 500,
          result: hostile('attempt.result'),
        },
      ],
      health: [
        { state: hostile('band.state'), activeOrigin: hostile('band.activeOrigin'), from: 0, to: 1_000 },
      ],
      waits: [{ requestId: hostile('wait.requestId'), origin, from: 500, to: 600 }],
      served: [
        {
          origin,
          at: 600,
          method: hostile('served.method'),
          path: hostile('served.path'),
          reply: hostile('served.reply'),
          applied: false,
          probe: false,
        },
      ],
      events: [
        event('health-changed', 600, {
          type: hostile('event.type'),
          requestId: hostile('event.requestId'),
          origin: hostile('event.origin'),
          reason: hostile('event.reason'),
          change: hostile('event.change'),
          from: hostile('event.from'),
          to: hostile('event.to'),
          criterion: hostile('event.criterion'),
          failureClass: hostile('event.failureClass'),
        }),
      ],
      marks: [{ at: 500, label: hostile('mark.label') }],
    };
    const page = renderHtmlReport({
      ...report([
        scenario(hostile('name'), {
          title: hostile('title'),
          expected: hostile('expected'),
          verdict: 'fail',
          checks: [{ label: hostile('check.label'), pass: false, detail: hostile('check.detail') }],
          error: hostile('error'),
          decided: {
            requests: 1,
            attempts: 1,
            waitsMs: [100],
            origins: [hostile('decided.origins')],
            outcomes: [hostile('decided.outcomes')],
          },
          seen: [{ origin: hostile('seen.origin'), requests: 1, probes: 0, writesApplied: 0 }],
          timeline,
        }),
      ]),
      startedAt: hostile('startedAt'),
      node: hostile('node'),
    });
    const fields = [
      'name',
      'title',
      'expected',
      'check.label',
      'check.detail',
      'error',
      'decided.origins',
      'decided.outcomes',
      'seen.origin',
      'origin',
      'attempt.requestId',
      'attempt.method',
      'attempt.path',
      'attempt.result',
      'band.state',
      'band.activeOrigin',
      'wait.requestId',
      'served.method',
      'served.path',
      'served.reply',
      'event.type',
      'event.requestId',
      'event.origin',
      'event.reason',
      'event.change',
      'event.from',
      'event.to',
      'event.criterion',
      'event.failureClass',
      'mark.label',
      'startedAt',
      'node',
    ];
    for (const field of fields) expect(page, field).toContain(escaped(field));
    expect(page).not.toContain('<script>alert');
    expect(page).not.toContain("'x'");
    expect(count(page, /<script/g)).toBe(1);
    expect(count(page, /<\/svg>/g)).toBe(count(page, /<svg[ >]/g));
    // The unknown state and result get the neutral colour, not a class made from the string.
    expect(page).toContain('class="h h-other"');
    expect(page).toContain('class="a r-other"');
  });

  it('points nowhere off the page: no src, no external href, no @import, no url() but #ids', () => {
    for (const page of [html]) {
      const references = [
        ...page.matchAll(/\s(?:src|href|xlink:href|action|srcset|poster|data)\s*=\s*"([^"]*)"/gi),
      ];
      expect(references.length).toBeGreaterThan(0);
      for (const [, target] of references) expect(target).toMatch(/^#[A-Za-z][\w-]*$/);
      expect(page).not.toMatch(/\ssrc\s*=/i);
      expect(page).not.toMatch(/@import/i);
      expect(page).not.toMatch(/url\(\s*(?!#)/i);
      expect(page).not.toMatch(/https?:\/\//i);
      expect(page).not.toMatch(/<(?:link|img|iframe|object|embed|audio|video|source|base)\b/i);
    }
  });

  it('imports no Node built-in, so a browser can bundle it', async () => {
    const entry = fileURLToPath(new URL('../../src/drill/html-report.ts', import.meta.url));
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      write: false,
      platform: 'browser',
      format: 'esm',
      logLevel: 'silent',
    });
    expect(result.errors).toEqual([]);
    expect(result.outputFiles[0]?.text).toContain('renderHtmlReport');
  });
});

describe('the time axis', () => {
  it('picks round steps and the unit that reads best for the span', () => {
    expect([40, 900, 5_125, 70_000, 600_000].map(tickStepMs)).toEqual([5, 200, 1_000, 10_000, 120_000]);
    expect(tickLabel(10, 5)).toBe('10 ms');
    expect(tickLabel(3_000, 1_000)).toBe('3 s');
    expect(tickLabel(240_000, 120_000)).toBe('4 min');
    expect(tickLabel(0, 120_000)).toBe('0');
  });
});
