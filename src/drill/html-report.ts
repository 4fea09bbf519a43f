/**
 * The drill's visual report: one self-contained HTML page (inline CSS and SVG; no font, image, script or
 * style is fetched) with the totals, a summary table, and per scenario its checks, a timeline and the
 * decision events. The timeline draws, over the scenario's simulated time, the origin-health bands, one lane
 * per origin with its attempts (coloured by result), the waits between them and the requests the origin saw,
 * and the scenario's marks. Every string from the report is escaped. Elements carry `data-kind` (and
 * sections `data-scenario`) so tests can count them.
 *
 * A pure string renderer with no Node built-ins, so it runs in a browser too.
 */
import type {
  DrillReport,
  ScenarioReport,
  ScenarioTimeline,
  TimelineAttempt,
  TimelineEvent,
  TimelineHealthBand,
  TimelineServed,
  TimelineWait,
} from './drill-report.js';

export function renderHtmlReport(report: DrillReport): string {
  const ids = report.scenarios.map((scenario, index) => sectionId(scenario.name, index));
  const total = report.scenarios.length;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>failwise drill: ${report.passed} passed, ${report.failed} failed</title>
<style>${STYLE}</style></head>
<body>
<header data-kind="header"><h1>failwise failure drill</h1>
<p class="totals"><span class="badge v-pass" data-kind="passed">${report.passed} passed</span> <span class="badge ${report.failed > 0 ? 'v-fail' : 'v-none'}" data-kind="failed">${report.failed} failed</span> of ${total} scenario${total === 1 ? '' : 's'}</p>
<dl class="meta"><dt>Started</dt><dd><time datetime="${esc(report.startedAt)}">${esc(report.startedAt)}</time></dd><dt>Node</dt><dd>${esc(report.node)}</dd><dt>Real time</dt><dd>${esc(formatMs(report.realMs))}</dd></dl>
</header>
<main>
${renderSummary(report.scenarios, ids)}
${renderLegend(report.scenarios)}
${report.scenarios.map((scenario, index) => renderScenario(scenario, ids[index] ?? '')).join('\n')}
</main>
<script>addEventListener('beforeprint',function(){document.querySelectorAll('details').forEach(function(d){d.open=true})})</script>
</body></html>
`;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text safe both between tags and inside a double-quoted attribute. Absent values print as nothing. */
export function escapeHtml(value: string | number | boolean | undefined | null): string {
  if (value === undefined || value === null) return '';
  return String(value).replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}
const esc = escapeHtml;

/** An id made only of safe characters, unique by index, so names never reach an id or a fragment raw. */
function sectionId(name: string, index: number): string {
  const slug = String(name)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 60);
  return `scenario-${index + 1}${slug === '' ? '' : `-${slug}`}`;
}

/** `850 ms`, `5.125 s`, `10 min 2.5 s`: exact, for tooltips and tables. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (Math.abs(ms) < 1000) return `${round(ms, 1)} ms`;
  if (Math.abs(ms) < 60_000) return `${round(ms / 1000, 3)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = round((ms - minutes * 60_000) / 1000, 3);
  return seconds === 0 ? `${minutes} min` : `${minutes} min ${seconds} s`;
}

const round = (value: number, digits: number): number => {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
};

// ---------------------------------------------------------------------------------------------- summary

function renderSummary(scenarios: readonly ScenarioReport[], ids: readonly string[]): string {
  const rows = scenarios.map((scenario, index) => {
    const { decided } = scenario;
    const seen = scenario.seen
      .map(
        (origin) =>
          `<div><b>${esc(origin.origin)}</b> ${plural(origin.requests, 'request')}${origin.probes === 0 ? '' : ` (${plural(origin.probes, 'probe')})`}, ${plural(origin.writesApplied, 'write')} applied</div>`,
      )
      .join('');
    return `<tr data-kind="summary-row" data-scenario="${esc(scenario.name)}">
<td><a href="#${ids[index] ?? ''}">${esc(scenario.name)}</a><div class="sub">${esc(scenario.title)}</div></td>
<td>${esc(countedList(decided.outcomes)) || '<span class="sub">none</span>'}</td>
<td class="num">${decided.attempts}</td>
<td>${esc(waitsSummary(decided.waitsMs))}</td>
<td>${esc(decided.origins.join(', ')) || '<span class="sub">none</span>'}</td>
<td>${seen}</td>
<td>${verdictBadge(scenario.verdict)}</td></tr>`;
  });
  return `<section id="summary"><h2>Summary</h2>
<table class="summary"><thead><tr><th>Scenario</th><th>Outcome</th><th>Attempts</th><th>Waits</th><th>Origins used</th><th>What the origins saw</th><th>Verdict</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody></table></section>`;
}

const plural = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** `succeeded`, or `40× succeeded, 2× deferred` when a scenario ran many requests. */
function countedList(items: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1);
  return [...counts].map(([item, count]) => (count === 1 ? item : `${count}× ${item}`)).join(', ');
}

function waitsSummary(waitsMs: readonly number[]): string {
  if (waitsMs.length === 0) return 'none';
  if (waitsMs.length <= 4) return waitsMs.map(formatMs).join(', ');
  const total = waitsMs.reduce((sum, ms) => sum + ms, 0);
  return `${waitsMs.length} waits, ${formatMs(total)} in all`;
}

const verdictBadge = (verdict: string): string =>
  `<span class="badge ${verdict === 'pass' ? 'v-pass' : 'v-fail'}">${esc(verdict)}</span>`;

// ----------------------------------------------------------------------------------------------- colours

/** Attempt results with a colour of their own; any other becomes `other`. */
const RESULT_CLASSES = [
  'ok',
  'response-timeout',
  'connect-timeout',
  'connection-lost',
  'dns',
  'connect',
  'offline',
  'tls',
  'unauthorized',
  'rate-limited',
  'unavailable',
  'server-error',
  'client-error',
  'unexpected',
  'cancelled',
  'unfinished',
] as const;
const HEALTH_STATES = ['healthy', 'suspect', 'failedOver', 'probingFailback'] as const;

/** The result's failure class (`unavailable 503` -> `unavailable`), as a CSS-safe key. */
function resultKey(result: string): string {
  const head = String(result).split(' ')[0] ?? '';
  return (RESULT_CLASSES as readonly string[]).includes(head) ? head : 'other';
}

function healthKey(state: string): string {
  return (HEALTH_STATES as readonly string[]).includes(state) ? state : 'other';
}

/** What a request's reply looked like to the origin, for its marker's colour. */
function servedKey(served: TimelineServed): 'probe' | 'applied' | 'ok' | 'hang' | 'drop' | 'error' {
  if (served.probe) return 'probe';
  if (served.applied) return 'applied';
  const reply = String(served.reply);
  if (/^[23]\d\d/.test(reply)) return 'ok';
  if (reply.startsWith('hang')) return 'hang';
  if (reply.startsWith('drop')) return 'drop';
  return 'error';
}

// ------------------------------------------------------------------------------------------------ legend

function renderLegend(scenarios: readonly ScenarioReport[]): string {
  const results = new Map<string, string>([['ok', 'ok']]);
  const states = new Map<string, string>();
  for (const scenario of scenarios) {
    for (const attempt of scenario.timeline.attempts) {
      const key = resultKey(attempt.result);
      const label = key === 'other' ? (String(attempt.result).split(' ')[0] ?? '') : key;
      if (!results.has(label)) results.set(label, key);
    }
    for (const band of scenario.timeline.health) states.set(band.state, healthKey(band.state));
  }
  if (states.size === 0) states.set('healthy', 'healthy');
  const swatch = (shape: string, label: string) =>
    `<li><svg width="22" height="14" aria-hidden="true">${shape}</svg>${label}</li>`;
  const attemptItems = [...results].map(([label, key]) =>
    swatch(`<rect class="a r-${key}" x="1" y="2" width="20" height="10"/>`, esc(label)),
  );
  const healthItems = [...states].map(([label, key]) =>
    swatch(`<rect class="h h-${key}" x="1" y="1" width="20" height="12"/>`, esc(label)),
  );
  const otherItems = [
    swatch('<rect class="w" x="1" y="4" width="20" height="6"/>', 'backoff wait'),
    swatch('<rect class="w w-ra" x="1" y="4" width="20" height="6"/>', 'Retry-After wait'),
    swatch('<rect class="s s-ok" x="10" y="2" width="2" height="10"/>', 'request served (2xx/3xx)'),
    swatch('<rect class="s s-error" x="10" y="2" width="2" height="10"/>', 'answered 4xx/5xx'),
    swatch('<rect class="s s-hang" x="10" y="2" width="2" height="10"/>', 'hang'),
    swatch('<rect class="s s-drop" x="10" y="2" width="2" height="10"/>', 'drop'),
    swatch('<circle class="s s-probe" cx="11" cy="7" r="3.5"/>', 'health probe (HEAD /)'),
    swatch('<rect class="s s-applied" x="7.5" y="3.5" width="7" height="7"/>', 'write applied'),
    swatch('<line class="m" x1="11" y1="0" x2="11" y2="14"/>', 'scenario mark'),
  ];
  return `<section id="legend" data-kind="legend"><h2>Legend</h2>
<p class="sub">Time runs left to right in simulated milliseconds. Hover any element for its details.</p>
<div class="legend"><div><h3>Attempts, by result</h3><ul>${attemptItems.join('')}</ul></div>
<div><h3>Origin health (where traffic went)</h3><ul>${healthItems.join('')}</ul></div>
<div><h3>Waits and what origins saw</h3><ul>${otherItems.join('')}</ul></div></div></section>`;
}

// ---------------------------------------------------------------------------------------------- scenario

function renderScenario(scenario: ScenarioReport, id: string): string {
  const checks = scenario.checks
    .map(
      (check) =>
        `<li data-kind="check" data-pass="${check.pass ? 'true' : 'false'}" class="${check.pass ? 'pass' : 'fail'}"><span class="mark" aria-label="${check.pass ? 'pass' : 'fail'}">${check.pass ? '✓' : '✗'}</span> ${esc(check.label)}${check.detail === undefined ? '' : ` <span class="detail">(${esc(check.detail)})</span>`}</li>`,
    )
    .join('');
  const error =
    scenario.error === undefined
      ? ''
      : `<div class="error" data-kind="error"><b>The scenario threw:</b> <pre>${esc(scenario.error)}</pre></div>`;
  return `<section class="scenario" id="${id}" data-scenario="${esc(scenario.name)}" data-verdict="${scenario.verdict === 'pass' ? 'pass' : 'fail'}">
<h2>${verdictBadge(scenario.verdict)} ${esc(scenario.title)} <code>${esc(scenario.name)}</code></h2>
<p class="expected"><b>Expected:</b> ${esc(scenario.expected)}</p>
<p class="sub">Simulated time ${esc(formatMs(scenario.timeline.durationMs))} · ${plural(scenario.decided.requests, 'request')} · ${plural(scenario.decided.attempts, 'attempt')} · real time ${esc(formatMs(scenario.realMs))}</p>
${error}<ul class="checks">${checks || '<li class="fail">no checks</li>'}</ul>
<figure class="timeline">${renderTimeline(scenario.timeline)}</figure>
${renderEvents(scenario.timeline.events)}
<p class="top"><a href="#summary">back to the summary</a></p>
</section>`;
}

function renderEvents(events: readonly TimelineEvent[]): string {
  const rows = events.map((event) => {
    const delay =
      event.delayMs === undefined
        ? ''
        : `${event.delayMs}${event.retryAfterMs === undefined ? '' : ` (Retry-After ${event.retryAfterMs})`}`;
    const moved =
      event.from === undefined && event.to === undefined
        ? ''
        : `${esc(event.from)} → ${esc(event.to)}${event.criterion === undefined ? '' : ` <span class="sub">(${esc(event.criterion)})</span>`}`;
    const reason = [event.reason, event.change].filter((part) => part !== undefined).join(' ');
    // `</td>` is optional in HTML; leaving it out halves a table that runs to hundreds of rows.
    const cells = [event.at, event.type, event.requestId, event.origin, event.attempt, event.failureClass]
      .concat([event.status, delay, reason])
      .map((cell) => `<td>${esc(cell)}`);
    return `<tr data-kind="event">${cells.join('')}<td>${moved}</tr>`;
  });
  return `<details class="events"><summary>Decision events (${events.length})</summary>
<table><thead><tr><th>at (ms)</th><th>type</th><th>request</th><th>origin</th><th>attempt</th><th>class</th><th>status</th><th>delay (ms)</th><th>reason</th><th>from → to</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody></table></details>`;
}

// ---------------------------------------------------------------------------------------------- timeline

/** The SVG's coordinate box: lane labels on the left, then the plot. */
const CHART = { width: 960, left: 128, right: 28 } as const;
const PLOT_WIDTH = CHART.width - CHART.left - CHART.right;
const ROW = { markLabel: 13, band: 20, attempt: 14, served: 16 } as const;
/** Concurrent requests on one origin each get a row, up to this many; beyond it, rows are shared. */
const MAX_REQUEST_ROWS = 10;
/** In a scenario that took no simulated time, attempt N of a request is drawn as the Nth block this wide. */
const INSTANT_BLOCK = 150;
/** Ticks on the time axis at most; steps stay round. */
const MAX_TICKS = 8;
const TICK_STEPS_MS = [
  1, 2, 5, 10, 20, 50, 100, 200, 250, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000,
  300_000, 600_000, 900_000, 1_800_000, 3_600_000,
];
/** An estimate of an 11px sans-serif character's width, to decide whether a label fits. */
const CHAR_WIDTH = 6.2;

interface Scale {
  /** The simulated time the plot spans (at least 1, so the arithmetic holds for a 0 ms scenario). */
  spanMs: number;
  /**
   * Everything happened at 0 ms: a time axis would pile it all on one pixel, so attempts are drawn in
   * order (attempt N as the Nth block) and health bands side by side, not to scale.
   */
  instant: boolean;
  x(ms: number): number;
}

function scaleOf(timeline: ScenarioTimeline): Scale {
  // Anything recorded past durationMs (a wait still pending when the scenario ended) stays in view.
  const ends = [
    timeline.durationMs,
    ...timeline.attempts.map((attempt) => attempt.endAt),
    ...timeline.waits.map((wait) => wait.to),
    ...timeline.served.map((served) => served.at),
    ...timeline.marks.map((mark) => mark.at),
  ].filter((ms) => Number.isFinite(ms));
  const latest = Math.max(0, ...ends);
  const spanMs = Math.max(1, latest);
  return {
    spanMs,
    instant: latest === 0,
    x: (ms) =>
      CHART.left + (Math.min(Math.max(Number.isFinite(ms) ? ms : 0, 0), spanMs) / spanMs) * PLOT_WIDTH,
  };
}

/** One coordinate, to a tenth of a pixel: enough for the eye, and it keeps the file small. */
const px = (value: number): string => String(round(value, 1));

interface Span {
  x: number;
  width: number;
}

/** A span from `fromMs` to `toMs`, at least 1px wide so an instant stays visible. */
function spanX(scale: Scale, fromMs: number, toMs: number): Span {
  const x = scale.x(fromMs);
  const width = Math.max(1, scale.x(toMs) - x);
  return { x: Math.min(x, CHART.left + PLOT_WIDTH - 1), width };
}

function attemptSpan(scale: Scale, attempt: TimelineAttempt): Span {
  if (!scale.instant) return spanX(scale, attempt.startAt, attempt.endAt);
  const blocks = Math.floor(PLOT_WIDTH / INSTANT_BLOCK);
  const index = Math.min(Math.max(0, Math.floor(attempt.attempt) - 1), blocks - 1);
  return { x: CHART.left + index * INSTANT_BLOCK, width: INSTANT_BLOCK - 4 };
}

function bandSpan(scale: Scale, band: TimelineHealthBand, index: number, count: number): Span {
  if (!scale.instant) return spanX(scale, band.from, band.to);
  const width = PLOT_WIDTH / count;
  return { x: CHART.left + index * width, width };
}

function fits(label: string, width: number): boolean {
  return label.length * CHAR_WIDTH + 6 <= width;
}

/** Origins in the order attempts first went to them, then those no attempt went to. */
function laneOrder(timeline: ScenarioTimeline): string[] {
  return [
    ...new Set([
      ...[...timeline.attempts].sort((a, b) => a.startAt - b.startAt).map((attempt) => attempt.origin),
      ...timeline.origins,
      ...timeline.waits.map((wait) => wait.origin),
      ...timeline.served.map((served) => served.origin),
    ]),
  ];
}

function renderTimeline(timeline: ScenarioTimeline): string {
  const scale = scaleOf(timeline);
  const marks = placeMarkLabels(timeline.marks, scale);
  const markRows = marks.reduce((rows, mark) => Math.max(rows, (mark.row ?? -1) + 1), 0);
  const parts: string[] = [];
  let y = 4 + markRows * ROW.markLabel;
  const chartTop = y;

  parts.push(
    `<text class="lane-label" x="${CHART.left - 8}" y="${px(y + 13)}" text-anchor="end">health</text>`,
  );
  timeline.health.forEach((band, index) => {
    const { x, width } = bandSpan(scale, band, index, timeline.health.length);
    // The active origin can be unknown (empty) when no origin of the scenario was a live server.
    const label = band.activeOrigin === '' ? band.state : `${band.state} · ${band.activeOrigin}`;
    const traffic = band.activeOrigin === '' ? '' : `, traffic to ${band.activeOrigin}`;
    parts.push(
      `<rect data-kind="band" class="h h-${healthKey(band.state)}" x="${px(x)}" y="${y}" width="${px(width)}" height="${ROW.band - 2}"><title>${esc(`${band.state}${traffic}, ${band.from}–${band.to} ms (${formatMs(band.to - band.from)})`)}</title></rect>`,
    );
    if (fits(label, width))
      parts.push(`<text class="in" x="${px(x + 4)}" y="${y + 13}">${esc(label)}</text>`);
  });
  if (timeline.health.length === 0)
    parts.push(`<text class="empty" x="${CHART.left + 6}" y="${y + 13}">no health recorded</text>`);
  y += ROW.band + 6;

  for (const origin of laneOrder(timeline)) {
    const lane = renderLane(origin, timeline, scale, y);
    parts.push(lane.svg);
    y += lane.height;
  }
  const axisY = y + 2;
  parts.push(renderAxis(scale, axisY));
  for (const mark of marks) {
    const x = scale.x(mark.at);
    const labelY = 4 + (mark.row ?? 0) * ROW.markLabel;
    const text =
      mark.row === undefined
        ? ''
        : `<text class="m-label" x="${px(mark.anchor === 'start' ? x + 3 : x - 3)}" y="${labelY + 10}" text-anchor="${mark.anchor}">${esc(mark.label)}</text>`;
    parts.push(
      `<g data-kind="mark"><title>${esc(`${mark.label} at ${mark.at} ms (${formatMs(mark.at)})`)}</title><line class="m" x1="${px(x)}" y1="${mark.row === undefined ? chartTop : labelY}" x2="${px(x)}" y2="${axisY}"/>${text}</g>`,
    );
  }
  const height = axisY + 24;
  // The section's header already gives the duration; only a scenario with none needs a word of explanation.
  const caption = scale.instant
    ? '<figcaption class="sub">Everything happened at 0 ms of simulated time: attempts are drawn in order (#1, #2, …), not to scale.</figcaption>'
    : '';
  return `<svg data-kind="timeline" class="tl" viewBox="0 0 ${CHART.width} ${height}" width="${CHART.width}" height="${height}" role="img" aria-label="${esc(`Timeline over ${formatMs(timeline.durationMs)} of simulated time`)}">
${parts.join('\n')}
</svg>${caption}`;
}

/**
 * Gives each request its own row in a lane while it overlaps another (concurrent requests), so bars never
 * hide each other; sequential requests share the first row. Packing uses pixels, as bars are at least 1px
 * wide: requests at the same instant still get rows of their own.
 */
function requestRows(
  attempts: readonly TimelineAttempt[],
  waits: readonly TimelineWait[],
  scale: Scale,
): { rows: Map<string, number>; count: number } {
  const extent = new Map<string, { from: number; to: number }>();
  const extend = (requestId: string, { x, width }: Span) => {
    const known = extent.get(requestId);
    extent.set(requestId, {
      from: Math.min(known?.from ?? Infinity, x),
      to: Math.max(known?.to ?? -Infinity, x + width),
    });
  };
  for (const attempt of attempts) extend(attempt.requestId, attemptSpan(scale, attempt));
  for (const wait of waits) extend(wait.requestId, spanX(scale, wait.from, wait.to));
  const rowEnds: number[] = [];
  const rows = new Map<string, number>();
  for (const [requestId, { from, to }] of [...extent].sort((a, b) => a[1].from - b[1].from)) {
    let row = rowEnds.findIndex((end) => end <= from);
    if (row === -1 && rowEnds.length < MAX_REQUEST_ROWS) row = rowEnds.length;
    if (row === -1) row = rowEnds.indexOf(Math.min(...rowEnds));
    rowEnds[row] = Math.max(rowEnds[row] ?? 0, to);
    rows.set(requestId, row);
  }
  return { rows, count: Math.max(1, rowEnds.length) };
}

function renderLane(
  origin: string,
  timeline: ScenarioTimeline,
  scale: Scale,
  top: number,
): { svg: string; height: number } {
  const attempts = timeline.attempts.filter((attempt) => attempt.origin === origin);
  const waits = timeline.waits.filter((wait) => wait.origin === origin);
  const served = timeline.served.filter((request) => request.origin === origin);
  const { rows, count } = requestRows(attempts, waits, scale);
  const servedY = top + 6 + count * ROW.attempt + 1;
  const height = 6 + count * ROW.attempt + ROW.served + 6;
  const parts: string[] = [
    `<rect class="lane" x="0" y="${top}" width="${CHART.width}" height="${height}"/>`,
    `<rect class="saw" x="${CHART.left}" y="${servedY - 1}" width="${PLOT_WIDTH}" height="${ROW.served - 2}"/>`,
    `<text class="lane-label" x="${CHART.left - 8}" y="${top + 6 + 10}" text-anchor="end">${esc(truncate(origin, 18))}<title>${esc(`origin ${origin}: ${plural(attempts.length, 'attempt')}, ${plural(served.length, 'request')} seen`)}</title></text>`,
    `<text class="saw-label" x="${CHART.left - 8}" y="${servedY + 9}" text-anchor="end">saw</text>`,
  ];
  const rowTop = (requestId: string) => top + 6 + (rows.get(requestId) ?? 0) * ROW.attempt;
  for (const wait of waits) {
    const { x, width } = spanX(scale, wait.from, wait.to);
    const retryAfter = wait.retryAfterMs !== undefined;
    const what = retryAfter ? `Retry-After wait (server asked ${wait.retryAfterMs} ms)` : 'backoff wait';
    parts.push(
      `<rect data-kind="wait"${retryAfter ? ' data-retry-after="true"' : ''} class="w${retryAfter ? ' w-ra' : ''}" x="${px(x)}" y="${rowTop(wait.requestId) + 2}" width="${px(width)}" height="6"><title>${esc(`${wait.requestId}: ${what}, ${wait.from}–${wait.to} ms (${formatMs(wait.to - wait.from)}) after an attempt on ${wait.origin}`)}</title></rect>`,
    );
  }
  for (const attempt of attempts) {
    const { x, width } = attemptSpan(scale, attempt);
    const y = rowTop(attempt.requestId);
    parts.push(
      `<rect data-kind="attempt" class="a r-${resultKey(attempt.result)}" x="${px(x)}" y="${y}" width="${px(width)}" height="10"><title>${esc(`${attempt.requestId} attempt ${attempt.attempt}: ${attempt.method} ${attempt.path} → ${attempt.origin}, ${attempt.startAt}–${attempt.endAt} ms (${formatMs(attempt.endAt - attempt.startAt)}): ${attempt.result}`)}</title></rect>`,
    );
    const label = `#${attempt.attempt} ${attempt.result}`;
    if (fits(label, width)) parts.push(`<text class="in" x="${px(x + 3)}" y="${y + 9}">${esc(label)}</text>`);
  }
  for (const request of served) parts.push(servedMarker(request, scale.x(request.at), servedY));
  if (attempts.length === 0 && served.length === 0)
    parts.push(
      `<text class="empty" x="${CHART.left + 6}" y="${top + 6 + 10}">no attempt went here and the origin saw no request</text>`,
    );
  else if (served.length === 0)
    parts.push(
      `<text class="empty" x="${CHART.left + 6}" y="${servedY + 9}">the origin saw no request</text>`,
    );
  else if (scale.instant)
    parts.push(
      `<text class="empty" x="${CHART.left + 8}" y="${servedY + 9}">${esc(plural(served.length, 'request'))} at 0 ms</text>`,
    );
  return { svg: parts.join('\n'), height };
}

/** A tick for a request, a hollow circle for a probe, a filled square for an applied write. */
function servedMarker(request: TimelineServed, x: number, y: number): string {
  const key = servedKey(request);
  const notes = `${request.probe ? ' (health probe)' : ''}${request.applied ? ' (write applied)' : ''}`;
  const title = `<title>${esc(`${request.origin} saw ${request.method} ${request.path} at ${request.at} ms: ${request.reply}${notes}`)}</title>`;
  const kind = `data-kind="served" data-served="${key === 'probe' || key === 'applied' ? key : 'request'}"`;
  if (key === 'probe')
    return `<circle ${kind} class="s s-probe" cx="${px(x)}" cy="${y + 6}" r="3.5">${title}</circle>`;
  if (key === 'applied')
    return `<rect ${kind} class="s s-applied" x="${px(x - 3.5)}" y="${y + 2.5}" width="7" height="7">${title}</rect>`;
  return `<rect ${kind} class="s s-${key}" x="${px(x - 1)}" y="${y + 1}" width="2" height="10">${title}</rect>`;
}

const truncate = (text: string, max: number): string =>
  String(text).length <= max ? String(text) : `${String(text).slice(0, max - 1)}…`;

interface PlacedMark {
  at: number;
  label: string;
  /** The label's row above the chart, or undefined when no row had room (the tooltip still names it). */
  row: number | undefined;
  anchor: 'start' | 'end';
}

/** Puts each mark's label in the first row above the chart where it overlaps no other label. */
function placeMarkLabels(marks: ScenarioTimeline['marks'], scale: Scale): PlacedMark[] {
  const maxRows = 3;
  const occupied: Array<Array<[number, number]>> = Array.from({ length: maxRows }, () => []);
  return [...marks]
    .sort((a, b) => a.at - b.at)
    .map((mark) => {
      const x = scale.x(mark.at);
      const width = String(mark.label).length * CHAR_WIDTH;
      const anchor = x + 3 + width <= CHART.width ? 'start' : 'end';
      const from = anchor === 'start' ? x : x - 3 - width;
      const to = anchor === 'start' ? x + 3 + width : x;
      const row = occupied.findIndex((spans) => spans.every(([a, b]) => to + 6 <= a || from >= b + 6));
      if (row === -1) return { at: mark.at, label: mark.label, row: undefined, anchor };
      occupied[row]?.push([from, to]);
      return { at: mark.at, label: mark.label, row, anchor };
    });
}

/** A round step for ticks: at most MAX_TICKS of them across the span. */
export function tickStepMs(spanMs: number): number {
  for (const step of TICK_STEPS_MS) if (spanMs / step <= MAX_TICKS) return step;
  const hour = 3_600_000;
  return Math.ceil(spanMs / MAX_TICKS / hour) * hour;
}

/** A tick's label in the unit its step reads best in: `250 ms`, `15 s`, `2 min`. */
export function tickLabel(ms: number, stepMs: number): string {
  if (ms === 0) return '0';
  if (stepMs < 1_000) return `${ms} ms`;
  if (stepMs < 60_000) return `${round(ms / 1_000, 3)} s`;
  return `${round(ms / 60_000, 3)} min`;
}

function renderAxis(scale: Scale, y: number): string {
  const step = tickStepMs(scale.spanMs);
  // A scenario that took no time gets the 0 tick alone: a `1 ms` tick would invent a duration.
  const lastTick = scale.instant ? 0 : scale.spanMs;
  const parts = [
    `<line class="axis" x1="${CHART.left}" y1="${y}" x2="${CHART.left + PLOT_WIDTH}" y2="${y}"/>`,
  ];
  for (let ms = 0; ms <= lastTick; ms += step) {
    const x = px(scale.x(ms));
    parts.push(
      `<g data-kind="tick"><line class="axis" x1="${x}" y1="${y}" x2="${x}" y2="${y + 5}"/><text class="tick" x="${x}" y="${y + 17}" text-anchor="middle">${tickLabel(ms, step)}</text></g>`,
    );
  }
  return parts.join('\n');
}

// ------------------------------------------------------------------------------------------------- style

const STYLE = `
:root{color-scheme:light}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1b1f24;background:#fff;margin:0 auto;max-width:1040px;padding:16px 24px 48px}
h1{font-size:24px;margin:8px 0 4px}h2{font-size:18px;margin:28px 0 6px}h3{font-size:13px;margin:4px 0}
code{font:12px ui-monospace,Menlo,Consolas,monospace;background:#f1f3f5;padding:1px 4px;border-radius:3px;color:#444}
a{color:#0b57d0}.sub{color:#5f6368;font-size:12px}
.badge{display:inline-block;font-size:12px;font-weight:600;padding:1px 8px;border-radius:10px;vertical-align:2px}
.v-pass{background:#e6f4ea;color:#1e6b2f}.v-fail{background:#fce8e6;color:#b3261e}.v-none{background:#f1f3f5;color:#5f6368}
.totals{font-size:15px;margin:4px 0}
dl.meta{display:flex;flex-wrap:wrap;gap:2px 18px;margin:4px 0;font-size:13px;color:#444}dl.meta dt{font-weight:600}dl.meta dd{margin:0 0 0 -12px}
table{border-collapse:collapse;width:100%;font-size:12.5px}
th,td{border-bottom:1px solid #e3e6ea;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}.events td:nth-child(2){white-space:nowrap}.events td:is(:nth-child(1),:nth-child(5),:nth-child(7),:nth-child(8)){text-align:right;font-variant-numeric:tabular-nums}tbody tr:nth-child(even){background:#fbfcfd}td.num{text-align:right;font-variant-numeric:tabular-nums}
.legend{display:flex;flex-wrap:wrap;gap:8px 32px}.legend ul{list-style:none;margin:0;padding:0;columns:2;column-gap:18px;font-size:12px}
.legend li{display:flex;align-items:center;gap:4px;break-inside:avoid}.legend svg{flex:none}
section.scenario{border-top:2px solid #e3e6ea;margin-top:28px}
.expected{margin:4px 0}
.checks{list-style:none;padding:0;margin:6px 0}.checks li{margin:2px 0}
.checks .mark{display:inline-block;width:1.2em;font-weight:700}.checks .pass .mark{color:#1e6b2f}.checks .fail .mark{color:#b3261e}.checks .fail{color:#8c1d18}
.detail{color:#5f6368}
.error{background:#fce8e6;border-left:4px solid #b3261e;padding:6px 10px;margin:6px 0}.error pre{margin:4px 0 0;white-space:pre-wrap;font-size:12px}
figure.timeline{margin:10px 0}
svg.tl{display:block;width:100%;height:auto}
svg text{font:11px system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;fill:#24292f}
svg text.in{pointer-events:none;fill:#1b1f24}svg text.tick{fill:#5f6368}svg text.empty{fill:#80868b;font-style:italic}
svg text.lane-label{font-weight:600}svg text.m-label{fill:#37474f;font-weight:600}
.lane{fill:none;stroke:#eceff1}.saw{fill:#f6f8fa}svg text.saw-label{fill:#80868b;font-size:10px}
.axis{stroke:#9aa0a6;stroke-width:1}
.m{stroke:#455a64;stroke-width:1;stroke-dasharray:4 3}
.a{stroke-width:1}
.r-ok{fill:#a5d6a7;stroke:#2e7d32}.r-response-timeout{fill:#ffcc80;stroke:#e65100}.r-connect-timeout{fill:#ffe0b2;stroke:#ef6c00}
.r-connection-lost{fill:#ffab91;stroke:#bf360c}.r-dns{fill:#e1bee7;stroke:#6a1b9a}.r-connect{fill:#d1c4e9;stroke:#4527a0}
.r-offline{fill:#cfd8dc;stroke:#37474f}.r-tls{fill:#c5cae9;stroke:#283593}.r-unauthorized{fill:#f8bbd0;stroke:#ad1457}
.r-rate-limited{fill:#fff59d;stroke:#9e7c00}.r-unavailable{fill:#ef9a9a;stroke:#c62828}.r-server-error{fill:#e57373;stroke:#7f0000}
.r-client-error{fill:#d7ccc8;stroke:#4e342e}.r-unexpected{fill:#b0bec5;stroke:#263238}.r-cancelled{fill:#eeeeee;stroke:#616161}
.r-unfinished{fill:#fff;stroke:#616161;stroke-dasharray:2 2}.r-other{fill:#cfd8dc;stroke:#455a64}
.h{stroke:#fff;stroke-width:1}.h-healthy{fill:#e6f4ea}.h-suspect{fill:#fff4cc}.h-failedOver{fill:#fde0dc}.h-probingFailback{fill:#dcebfb}.h-other{fill:#eceff1}
.w{fill:#eceff1;stroke:#607d8b;stroke-width:1;stroke-dasharray:3 2}.w-ra{fill:#ede7f6;stroke:#5e35b1;stroke-dasharray:1 1.5}
.s-ok{fill:#2e7d32}.s-error{fill:#c62828}.s-hang{fill:#ef6c00}.s-drop{fill:#212121}
.s-probe{fill:#fff;stroke:#0277bd;stroke-width:1.5}.s-applied{fill:#6a1b9a;stroke:#fff;stroke-width:.5}
details.events{margin:8px 0}details.events summary{cursor:pointer;font-weight:600;font-size:13px}details.events table{margin-top:6px}
.top{font-size:12px;margin:6px 0 0}
@media print{body{max-width:none;padding:0}a{color:inherit;text-decoration:none}.top{display:none}figure.timeline,tr{break-inside:avoid}section.scenario{break-before:auto}}
`
  .trim()
  .replace(/\n/g, '');
