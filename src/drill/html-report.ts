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
import type { DrillReport, ScenarioReport, TimelineEvent } from './drill-report.js';
import { esc, formatMs, healthKey, plural, resultKey } from './html-format.js';
import { renderTimeline } from './html-timeline.js';
import { countedList } from './counted-list.js';

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

/** An id made only of safe characters, unique by index, so names never reach an id or a fragment raw. */
function sectionId(name: string, index: number): string {
  const slug = String(name)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 60);
  return `scenario-${index + 1}${slug === '' ? '' : `-${slug}`}`;
}

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
<td>${esc(countedList(decided.outcomes, '×')) || '<span class="sub">none</span>'}</td>
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

function waitsSummary(waitsMs: readonly number[]): string {
  if (waitsMs.length === 0) return 'none';
  if (waitsMs.length <= 4) return waitsMs.map(formatMs).join(', ');
  const total = waitsMs.reduce((sum, ms) => sum + ms, 0);
  return `${waitsMs.length} waits, ${formatMs(total)} in all`;
}

const verdictBadge = (verdict: string): string =>
  `<span class="badge ${verdict === 'pass' ? 'v-pass' : 'v-fail'}">${esc(verdict)}</span>`;

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

/** The columns of the events table: each kind of event fills those it has (DecisionEvent is a union). */
type EventCells = Partial<
  Record<
    | 'requestId'
    | 'entryId'
    | 'origin'
    | 'attempt'
    | 'failureClass'
    | 'status'
    | 'delayMs'
    | 'retryAfterMs'
    | 'reason'
    | 'change'
    | 'from'
    | 'to'
    | 'criterion',
    string | number
  >
> & { at: number; type: string };

function renderEvents(events: readonly TimelineEvent[]): string {
  const rows = events.map((timelineEvent) => {
    const event = timelineEvent as EventCells;
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
    const request = event.requestId ?? event.entryId;
    const cells = [event.at, event.type, request, event.origin, event.attempt, event.failureClass]
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
