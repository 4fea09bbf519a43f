/**
 * The SVG timeline of one drill scenario: origin-health bands, one lane per origin with its attempts, waits
 * and the requests it saw, the scenario's marks, and a time axis. Part of the HTML report (html-report.ts).
 */
import type {
  ScenarioTimeline,
  TimelineAttempt,
  TimelineHealthBand,
  TimelineServed,
  TimelineWait,
} from './drill-report.js';
import { esc, formatMs, healthKey, plural, resultKey, round, servedKey } from './html-format.js';

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

export function renderTimeline(timeline: ScenarioTimeline): string {
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
