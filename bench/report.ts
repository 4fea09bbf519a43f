/**
 * The pure half of `npm run bench`: what a run measured (`BenchResults`), the figures issue 10 asks for
 * (`summarize`), their targets (`TARGETS`), and the text made from them: the console tables, the JSON
 * summary line and docs/benchmarks.md. Nothing here times, allocates a server or reads the clock, so
 * test/bench/bench-report.test.ts checks it with fixed numbers.
 */

/** The peers of the success and retry sections, by id. */
export const PEERS = {
  failwise: 'failwise client.request (systemClock)',
  failwiseMicroClock: 'failwise client.request (microClock, for reference)',
  failwiseOtel: 'failwise client.request, openTelemetry() on the SDK (no-op exporters)',
  handLoop: 'hand-written retry loop',
  cockatiel: 'cockatiel retry + breaker + timeout',
  cockatielNoTimeout: 'cockatiel retry + breaker',
  pRetry: 'p-retry 6',
  /** Only between waits: the transport's send and nothing around it. */
  waitAlone: 'the wait alone (the send, nothing around it)',
} as const;
export type PeerId = keyof typeof PEERS;

/** One peer's cost per call, over interleaved rounds. */
export interface TimingRow {
  id: PeerId;
  /** Total time over total calls, all measured rounds. */
  meanUs: number;
  /** The median of the rounds' means. */
  medianUs: number;
  /** The fastest and slowest round's mean: how much the rounds disagree. */
  minUs: number;
  maxUs: number;
  calls: number;
  rounds: number;
}

export interface TimingSection {
  rows: TimingRow[];
  /** What each round looked like, for the method note (e.g. "12 rounds of about 80 ms per peer"). */
  roundMs: number;
}

export interface MemoryResult {
  requests: number;
  /** Heap used after the requests started minus before (both after a full gc). */
  heapDeltaBytes: number;
  /** `heapDeltaBytes / requests`. */
  bytesPerInflight: number;
  /** The same figure for a hand-written loop with an AbortController and a timer per request: the host's floor. */
  handLoopBytesPerInflight: number;
  /** Heap used after close and a full gc, minus the same baseline (negative: less than before). */
  retainedAfterCloseBytes: number;
  /** How long starting every request took, until the transport had seen each one. */
  startMs: number;
  /** How long `client.close()` and the end of every request took. */
  closeMs: number;
  /** Every request's promise settled after close. */
  allEnded: boolean;
  /** Outcomes after close, `status` or `status:reason`. */
  outcomes: Record<string, number>;
}

export interface ThroughputResult {
  requestsPerRound: number;
  concurrency: number;
  /** Requests per second of each measured round, in the order run. */
  fetchPerSecond: number[];
  /** Raw fetch with an AbortController and a 5 s timer per request: what cutting an attempt short costs. */
  fetchWithTimeoutPerSecond: number[];
  failwisePerSecond: number[];
  /** failwise over `nodeHttpTransport()` (failwise/node) instead of fetch: a reference, not the target's figure. */
  failwiseNodeHttpPerSecond: number[];
  /** Raw fetch of `/json`, its body read with `json()`. */
  jsonFetchPerSecond: number[];
  /** failwise's `client.request` of `/json`, the outcome's body read with `json()`. */
  jsonFailwisePerSecond: number[];
  /** The size of `/json`'s body. */
  jsonBytes: number;
  /** JSON requests, on either side, that did not end in the expected body (should be none). */
  jsonWrong: number;
  /** Requests that did not end in a 204, over every round (should be none). */
  fetchErrors: number;
  failwiseNotSucceeded: Record<string, number>;
}

export interface LoadRound {
  rawLoopMs: number;
  failwiseMs: number;
  /** The longest the event loop was held up during the round (`monitorEventLoopDelay`), in ms. */
  rawLoopMaxLoopDelayMs: number;
  failwiseMaxLoopDelayMs: number;
  /** `succeeded`, or `failed:<reason>`. */
  rawLoopOutcomes: Record<string, number>;
  failwiseOutcomes: Record<string, number>;
  /** Attempts the requests made in all (failwise's from their outcomes). */
  failwiseAttempts: number;
  rawLoopAttempts: number;
  /** The raw loop's failed attempts, by status or undici error code. */
  rawLoopAttemptFailures: Record<string, number>;
  /** failwise's failed attempts (its `attempt-failed` events) by failure class and status. */
  failwiseAttemptFailures: Record<string, number>;
  /** failwise's origin-health changes (`health-changed` events), `from>to`. */
  failwiseHealthChanges: Record<string, number>;
  /** Requests the server answered during the round (probes included). */
  rawLoopServerRequests: number;
  failwiseServerRequests: number;
}

export interface LoadResult {
  requests: number;
  rounds: LoadRound[];
}

export interface BundleFigures {
  entry: string;
  /** Every chunk, each gzipped on its own. */
  totalGzipBytes: number;
  /** What an app loads before it runs: the entry chunk and what it imports statically. */
  upFrontGzipBytes: number;
  ownGzipBytes: number;
  /** The same entry built with rolldown (scripts/rolldown-bundle.ts): up front, and every chunk. */
  rolldown: { upFrontGzipBytes: number; totalGzipBytes: number };
}

export interface BenchResults {
  meta: {
    date: string;
    node: string;
    platform: string;
    cpuModel: string;
    cores: number;
    command: string;
    durationS: number;
  };
  success: TimingSection;
  /**
   * The success path again, each answer after a real timer (`waitMs`), one call at a time: CPU µs per call
   * (`process.cpuUsage`), since the waits fill the wall time.
   */
  successBetweenWaits: TimingSection & { waitMs: number };
  retry: TimingSection;
  memory: MemoryResult;
  loopback: ThroughputResult;
  load: LoadResult;
  bundle: { everything: BundleFigures; minimal: BundleFigures };
}

/** The figures of a run; the JSON line printed last has exactly these keys. */
export interface Summary {
  successOverheadVsCockatiel: number;
  successOverheadVsCockatielNoTimeout: number;
  retryOverheadVsCockatiel: number;
  retryOverheadVsCockatielNoTimeout: number;
  bytesPerInflight: number;
  loopbackThroughputVsFetch: number;
  loadTimeVsRawLoop: number;
  budgetExhaustedUnderLoad: number;
  bundleEverythingKB: number;
  bundleMinimalKB: number;
}
export type SummaryKey = keyof Summary;

export interface Target {
  /** `<=` or `>=` the limit; `=` means exactly the limit. */
  op: '<=' | '>=' | '=';
  limit: number;
  unit: string;
  what: string;
}

/** Issue 10's targets. Reported next to the figures; nothing asserts them. */
export const TARGETS: Record<SummaryKey, Target> = {
  successOverheadVsCockatiel: {
    op: '<=',
    limit: 1,
    unit: 'x',
    what: 'success path, failwise mean ÷ cockatiel (with timeout)',
  },
  // Issue 10: "no slower than cockatiel with a timeout (ratio <= 1.0; aim for 2 x cockatiel without one)".
  successOverheadVsCockatielNoTimeout: {
    op: '<=',
    limit: 2,
    unit: 'x',
    what: "success path, failwise mean ÷ cockatiel without timeout (issue 10's aim)",
  },
  retryOverheadVsCockatiel: {
    op: '<=',
    limit: 1,
    unit: 'x',
    what: 'retry path (503, then 204), failwise mean ÷ cockatiel (with timeout)',
  },
  retryOverheadVsCockatielNoTimeout: {
    op: '<=',
    limit: 2,
    unit: 'x',
    what: "retry path, failwise mean ÷ cockatiel without timeout (issue 10's aim)",
  },
  bytesPerInflight: { op: '<=', limit: 1024, unit: 'B', what: 'heap per request in flight' },
  loopbackThroughputVsFetch: {
    op: '>=',
    limit: 0.95,
    unit: 'x',
    what: 'loopback HTTP req/s, failwise ÷ raw fetch',
  },
  loadTimeVsRawLoop: {
    op: '<=',
    limit: 1.2,
    unit: 'x',
    what: '3,000 requests at once, half 503 first: wall time ÷ raw retry loop',
  },
  budgetExhaustedUnderLoad: {
    op: '=',
    limit: 0,
    unit: '',
    what: 'failwise requests ending budget-exhausted under that load (worst round)',
  },
  bundleEverythingKB: { op: '<=', limit: 30, unit: 'KB', what: 'gzip, every chunk of src/index.ts' },
  bundleMinimalKB: {
    op: '<=',
    limit: 16,
    unit: 'KB',
    what: 'gzip, what a minimal app (bench/fixtures/minimal-app.ts) loads up front',
  },
};

export const SUMMARY_KEYS = Object.keys(TARGETS) as SummaryKey[];

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function row(section: TimingSection, id: PeerId): TimingRow {
  const found = section.rows.find((candidate) => candidate.id === id);
  if (!found) throw new Error(`bench report: no "${id}" row`);
  return found;
}

const round = (value: number, digits: number): number => {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
};

/** failwise's mean over `peer`'s in one section, rounded as printed. */
const failwiseOver = (section: TimingSection, peer: PeerId): number =>
  round(row(section, 'failwise').meanUs / row(section, peer).meanUs, 2);

/** The figures issue 10 asks for, rounded as printed. */
export function summarize(results: BenchResults): Summary {
  const { load, loopback, bundle } = results;
  return {
    successOverheadVsCockatiel: failwiseOver(results.success, 'cockatiel'),
    successOverheadVsCockatielNoTimeout: failwiseOver(results.success, 'cockatielNoTimeout'),
    retryOverheadVsCockatiel: failwiseOver(results.retry, 'cockatiel'),
    retryOverheadVsCockatielNoTimeout: failwiseOver(results.retry, 'cockatielNoTimeout'),
    bytesPerInflight: Math.round(results.memory.bytesPerInflight),
    loopbackThroughputVsFetch: round(median(loopback.failwisePerSecond) / median(loopback.fetchPerSecond), 3),
    loadTimeVsRawLoop: round(
      median(load.rounds.map((r) => r.failwiseMs)) / median(load.rounds.map((r) => r.rawLoopMs)),
      2,
    ),
    budgetExhaustedUnderLoad: Math.max(
      0,
      ...load.rounds.map((r) => r.failwiseOutcomes['failed:budget-exhausted'] ?? 0),
    ),
    bundleEverythingKB: round(bundle.everything.totalGzipBytes / 1024, 2),
    bundleMinimalKB: round(bundle.minimal.upFrontGzipBytes / 1024, 2),
  };
}

export function meetsTarget(key: SummaryKey, value: number): boolean {
  const { op, limit } = TARGETS[key];
  if (op === '<=') return value <= limit;
  if (op === '>=') return value >= limit;
  return value === limit;
}

/** The last line `npm run bench` prints: one JSON object, the summary's keys first. */
export function summaryLine(summary: Summary, extra: Record<string, string | number | boolean> = {}): string {
  return JSON.stringify({ ...summary, ...extra });
}

export type Align = 'left' | 'right';

/**
 * A Markdown table with padded columns, as Prettier formats one (so docs/benchmarks.md passes
 * `prettier --check` as written); it reads well in a terminal too. Cells must not contain `|`.
 */
export function renderTable(headers: string[], rows: string[][], align: Align[] = []): string {
  const all = [headers, ...rows];
  const widths = headers.map((_, column) =>
    Math.max(3, ...all.map((cells) => [...(cells[column] ?? '')].length)),
  );
  const pad = (cell: string, column: number) => {
    const fill = ' '.repeat((widths[column] ?? 0) - [...cell].length);
    return align[column] === 'right' ? fill + cell : cell + fill;
  };
  const line = (cells: string[]) => `| ${headers.map((_, c) => pad(cells[c] ?? '', c)).join(' | ')} |`;
  const rule = `| ${widths
    .map((width, column) => (align[column] === 'right' ? `${'-'.repeat(width - 1)}:` : '-'.repeat(width)))
    .join(' | ')} |`;
  return [line(headers), rule, ...rows.map(line)].join('\n');
}

/** A number with thousands separators and at most `digits` decimals. */
export function fmt(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return String(value);
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

const outcomeList = (outcomes: Record<string, number>): string => {
  const entries = Object.entries(outcomes).sort(([, a], [, b]) => b - a);
  return entries.length === 0 ? 'none' : entries.map(([name, count]) => `${name} ${fmt(count)}`).join(', ');
};

export function timingTable(section: TimingSection): string {
  const base = row(section, 'cockatiel').meanUs;
  const hand = row(section, 'handLoop').meanUs;
  return renderTable(
    ['peer', 'mean µs', 'median µs', 'rounds min–max µs', 'x cockatiel + timeout', 'x hand loop', 'calls'],
    section.rows.map((r) => [
      PEERS[r.id],
      fmt(r.meanUs, 2),
      fmt(r.medianUs, 2),
      `${fmt(r.minUs, 2)}–${fmt(r.maxUs, 2)}`,
      fmt(r.meanUs / base, 2),
      fmt(r.meanUs / hand, 1),
      fmt(r.calls),
    ]),
    ['left', 'right', 'right', 'right', 'right', 'right', 'right'],
  );
}

function memoryTable(memory: MemoryResult): string {
  return renderTable(
    ['measure', 'value'],
    [
      ['requests in flight', fmt(memory.requests)],
      ['heap delta', `${fmt(memory.heapDeltaBytes / 1024 / 1024, 1)} MiB`],
      ['bytes per request in flight', fmt(memory.bytesPerInflight)],
      [
        'the same, hand-written loop (AbortController + timer per request)',
        fmt(memory.handLoopBytesPerInflight),
      ],
      [
        'failwise ÷ hand-written loop',
        `${fmt(memory.bytesPerInflight / memory.handLoopBytesPerInflight, 2)} x`,
      ],
      ['time to start them all', `${fmt(memory.startMs)} ms`],
      ['close() until every request ended', `${fmt(memory.closeMs)} ms`],
      ['every request ended after close', memory.allEnded ? 'yes' : 'NO'],
      ['their outcomes', outcomeList(memory.outcomes)],
      ['heap retained after close, vs before', `${fmt(memory.retainedAfterCloseBytes / 1024, 0)} KiB`],
    ],
    ['left', 'right'],
  );
}

const perRound = (values: number[]) => values.map((v) => fmt(v)).join(', ');

/** The loopback rounds with a JSON body: raw fetch and failwise, each reading it with `json()`. */
function loopbackJsonTable(loopback: ThroughputResult): string {
  const fetchMedian = median(loopback.jsonFetchPerSecond);
  const failwiseMedian = median(loopback.jsonFailwisePerSecond);
  return renderTable(
    ['client, `/json` read with `json()`', 'median req/s', 'x fetch', 'req/s per round', 'not the body'],
    [
      ['raw fetch', fmt(fetchMedian), '1.00', perRound(loopback.jsonFetchPerSecond), fmt(loopback.jsonWrong)],
      [
        'failwise (default fetch transport)',
        fmt(failwiseMedian),
        fmt(failwiseMedian / fetchMedian, 2),
        perRound(loopback.jsonFailwisePerSecond),
        'counted with raw fetch',
      ],
    ],
    ['left', 'right', 'right', 'right', 'left'],
  );
}

function loopbackTable(loopback: ThroughputResult): string {
  const fetchMedian = median(loopback.fetchPerSecond);
  const failwiseMedian = median(loopback.failwisePerSecond);
  return renderTable(
    ['client', 'median req/s', 'x fetch', 'req/s per round', 'not a 204'],
    [
      ['raw fetch', fmt(fetchMedian), '1.00', perRound(loopback.fetchPerSecond), fmt(loopback.fetchErrors)],
      [
        'raw fetch with a timeout (AbortController + timer)',
        fmt(median(loopback.fetchWithTimeoutPerSecond)),
        fmt(median(loopback.fetchWithTimeoutPerSecond) / fetchMedian, 2),
        perRound(loopback.fetchWithTimeoutPerSecond),
        'counted with raw fetch',
      ],
      [
        'failwise (default fetch transport)',
        fmt(failwiseMedian),
        fmt(failwiseMedian / fetchMedian, 2),
        perRound(loopback.failwisePerSecond),
        outcomeList(loopback.failwiseNotSucceeded),
      ],
      [
        'failwise over `nodeHttpTransport()` (failwise/node), for reference',
        fmt(median(loopback.failwiseNodeHttpPerSecond)),
        fmt(median(loopback.failwiseNodeHttpPerSecond) / fetchMedian, 2),
        perRound(loopback.failwiseNodeHttpPerSecond),
        'counted with failwise',
      ],
    ],
    ['left', 'right', 'right', 'right', 'left'],
  );
}

function loadTable(load: LoadResult): string {
  const rawMedian = median(load.rounds.map((r) => r.rawLoopMs));
  const failwiseMedian = median(load.rounds.map((r) => r.failwiseMs));
  const times = renderTable(
    [
      'round',
      'raw loop ms',
      'failwise ms',
      'x raw loop',
      'attempts: raw loop (server saw)',
      'failwise (server saw)',
      'longest event-loop delay: raw loop',
      'failwise',
    ],
    [
      ...load.rounds.map((r, i) => [
        String(i + 1),
        fmt(r.rawLoopMs),
        fmt(r.failwiseMs),
        fmt(r.failwiseMs / r.rawLoopMs, 2),
        `${fmt(r.rawLoopAttempts)} (${fmt(r.rawLoopServerRequests)})`,
        `${fmt(r.failwiseAttempts)} (${fmt(r.failwiseServerRequests)})`,
        `${fmt(r.rawLoopMaxLoopDelayMs)} ms`,
        `${fmt(r.failwiseMaxLoopDelayMs)} ms`,
      ]),
      ['median', fmt(rawMedian), fmt(failwiseMedian), fmt(failwiseMedian / rawMedian, 2), '', '', '', ''],
    ],
    ['right', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
  );
  const outcomes = renderTable(
    ['round', 'raw loop outcomes', 'its failed attempts', 'failwise outcomes', 'its failed attempts'],
    load.rounds.map((r, i) => [
      String(i + 1),
      outcomeList(r.rawLoopOutcomes),
      outcomeList(r.rawLoopAttemptFailures),
      outcomeList(r.failwiseOutcomes),
      outcomeList(r.failwiseAttemptFailures),
    ]),
    ['right', 'left', 'left', 'left', 'left'],
  );
  const health = renderTable(
    ['round', 'failwise origin-health changes'],
    load.rounds.map((r, i) => [String(i + 1), outcomeList(r.failwiseHealthChanges)]),
    ['right', 'left'],
  );
  return `${times}\n\n${outcomes}\n\n${health}`;
}

function bundleTable(bundle: BenchResults['bundle']): string {
  const kb = (bytes: number) => `${fmt(bytes / 1024, 2)} KB`;
  return renderTable(
    [
      'bundle',
      'entry',
      'up front (gzip)',
      'all chunks (gzip)',
      'failwise own code, added (gzip)',
      'rolldown: up front',
      'rolldown: all chunks',
    ],
    (
      [
        ['everything', bundle.everything],
        ['minimal app', bundle.minimal],
      ] as const
    ).map(([name, figures]) => [
      name,
      `\`${figures.entry}\``,
      kb(figures.upFrontGzipBytes),
      kb(figures.totalGzipBytes),
      kb(figures.ownGzipBytes),
      kb(figures.rolldown.upFrontGzipBytes),
      kb(figures.rolldown.totalGzipBytes),
    ]),
    ['left', 'left', 'right', 'right', 'right', 'right', 'right'],
  );
}

const targetText = (target: Target): string =>
  `${target.op === '=' ? '' : `${target.op} `}${fmt(target.limit, target.unit === 'x' ? 2 : 0)}${target.unit === '' ? '' : ` ${target.unit}`}`;

const valueText = (key: SummaryKey, value: number): string => {
  const { unit } = TARGETS[key];
  return `${fmt(value, unit === 'x' ? (value >= 100 ? 0 : 2) : unit === 'KB' ? 2 : 0)}${unit === '' ? '' : ` ${unit}`}`;
};

/** Every figure of the summary next to its target. */
export function summaryTable(summary: Summary): string {
  return renderTable(
    ['figure', 'what', 'measured', 'target', 'met'],
    SUMMARY_KEYS.map((key) => [
      `\`${key}\``,
      TARGETS[key].what,
      valueText(key, summary[key]),
      targetText(TARGETS[key]),
      meetsTarget(key, summary[key]) ? 'yes' : 'no',
    ]),
    ['left', 'left', 'right', 'right', 'left'],
  );
}

/** The success path between waits: CPU per call, against cockatiel with its timeout and the hand-written loop. */
function betweenWaitsTable(section: TimingSection): string {
  const base = row(section, 'cockatiel').meanUs;
  const hand = row(section, 'handLoop').meanUs;
  const wait = row(section, 'waitAlone').meanUs;
  return renderTable(
    [
      'peer, each answer after a wait',
      'mean CPU µs',
      'median µs',
      'rounds min–max µs',
      'above the wait alone, µs',
      'x cockatiel + timeout',
      'x hand loop',
      'calls',
    ],
    section.rows.map((r) => [
      PEERS[r.id],
      fmt(r.meanUs, 1),
      fmt(r.medianUs, 1),
      `${fmt(r.minUs, 1)}–${fmt(r.maxUs, 1)}`,
      r.id === 'waitAlone' ? '' : fmt(r.meanUs - wait, 1),
      fmt(r.meanUs / base, 2),
      fmt(r.meanUs / hand, 1),
      fmt(r.calls),
    ]),
    ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
  );
}

/**
 * The success path between waits as two ratios of mean CPU per call (failwise over cockatiel with its timeout, and
 * over the hand-written loop): extra keys of the JSON line, references rather than issue 10's targets.
 */
export function betweenWaitsRatios(section: TimingSection): {
  successCpuBetweenWaitsVsCockatiel: number;
  successCpuBetweenWaitsVsHandLoop: number;
} {
  return {
    successCpuBetweenWaitsVsCockatiel: failwiseOver(section, 'cockatiel'),
    successCpuBetweenWaitsVsHandLoop: failwiseOver(section, 'handLoop'),
  };
}

/** The titled tables the console shows, one per section, the summary last. */
export function sections(results: BenchResults): { title: string; table: string }[] {
  return [
    {
      title: `1. Success path: a no-op transport answers 204 at once; then after a ${fmt(results.successBetweenWaits.waitMs)} ms wait (CPU per call)`,
      table: `${timingTable(results.success)}\n\n${betweenWaitsTable(results.successBetweenWaits)}`,
    },
    { title: '2. Retry path: 503, then 204; 0 ms backoff everywhere', table: timingTable(results.retry) },
    {
      title: `3. Memory: ${fmt(results.memory.requests)} requests in flight on a transport that never answers`,
      table: memoryTable(results.memory),
    },
    {
      title: `4. Loopback HTTP: ${fmt(results.loopback.requestsPerRound)} requests per round, ${results.loopback.concurrency} concurrent callers`,
      table: `${loopbackTable(results.loopback)}\n\n${loopbackJsonTable(results.loopback)}`,
    },
    {
      title: `5. Load: ${fmt(results.load.requests)} requests at once, every other one's first attempt gets a 503`,
      table: loadTable(results.load),
    },
    { title: '6. Bundle sizes (browser, esbuild, minified, gzip -9)', table: bundleTable(results.bundle) },
    { title: 'Summary against issue 10', table: summaryTable(summarize(results)) },
  ];
}

/** How section 1's second table was measured, and what it shows. */
function betweenWaitsNote(section: BenchResults['successBetweenWaits']): string {
  const failwise = row(section, 'failwise');
  const callsPerRound = Math.round(failwise.calls / failwise.rounds);
  return `**Between waits.** The same peers, but the transport answers each send after a real ${fmt(section.waitMs)} ms timer (bench/peers.ts, \`waited\`), as a server across a network would: the process sleeps in the middle of every call. One call at a time, ${failwise.rounds} interleaved rounds of ${fmt(callsPerRound)} calls per peer (about ${fmt(section.roundMs)} ms each), the order rotated each round, after a warm-up; each batch is timed by the process's CPU time (\`process.cpuUsage\`, user and system, every thread), not the wall clock, which the waits fill. The first row is the wait alone (the send, with nothing around it): the timer, and the process waking for it, which every peer pays; the column after the spread is each peer's mean above it, what its own code costs once the wait is over. For the peers whose code takes more than a few µs a call in the tight loop above, that figure is several times their tight-loop mean (the hand-written loop's and cockatiel's without a timeout are lost in the spread of the wait itself), most likely because code that runs after the process slept no longer finds its instructions and data in the processor's caches, where a tight loop keeps them. An app whose requests are spread out in time pays these figures rather than the ones above. Rounds disagree widely on a machine shared with others (the min–max column), so compare figures of one run. The ratios are of the means, the wait included.`;
}

/** docs/benchmarks.md, rewritten by each `npm run bench`. */
export function renderMarkdown(results: BenchResults): string {
  const { meta } = results;
  const [, retry, memory, loopback, load, bundle, summary] = sections(results).map((s) => s.table);
  const roundNote = (section: TimingSection) =>
    `${row(section, 'failwise').rounds} rounds, about ${fmt(section.roundMs)} ms per peer per round`;
  return `${[
    '# Benchmarks',
    '',
    '<!-- Written by `npm run bench` (bench/run.ts); edit bench/report.ts rather than this file. -->',
    '',
    `Measured with \`${meta.command}\` on ${meta.date}: Node ${meta.node}, ${meta.platform}, ${meta.cores} cores (${meta.cpuModel}); the run took ${fmt(meta.durationS)} s.`,
    'Absolute numbers depend on the machine; the ratios, measured side by side in one run, less so.',
    "Issue 10's targets are shown next to each figure; nothing asserts them.",
    '',
    '## Summary',
    '',
    summary,
    '',
    '## 1. Success path',
    '',
    `Each peer calls an in-process transport that answers a 204 at once (a new \`Response\` per call), one call after another (bench/peers.ts): failwise's \`client.request({ path: '/x' })\` (one client, \`systemClock\`); a hand-written loop (3 attempts, retrying failwise's retryable statuses or an error); cockatiel 3.2 \`wrap(retry(handleAll, { maxAttempts: 2 }), circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) }), timeout(10_000, TimeoutStrategy.Aggressive))\`, and the same without the timeout; p-retry 6 \`pRetry(fn, { retries: 2, minTimeout: 0 })\`. cockatiel and p-retry retry on errors, so their \`fn\` throws for a retryable status. Every batch is checked: one send per call, every call ending in the 204. Interleaved rounds (bench/harness.ts): ${roundNote(results.success)}, after a warm-up, the order rotated each round; no gc is forced between batches (a forced gc made the cheap peers 2 to 4 times slower right after it). The ratios are of means (all calls of all rounds).`,
    '',
    timingTable(results.success),
    '',
    betweenWaitsNote(results.successBetweenWaits),
    '',
    betweenWaitsTable(results.successBetweenWaits),
    '',
    '## 2. Retry path',
    '',
    `The transport answers 503, then 204. Every peer waits 0 ms between attempts on a real timer (Node runs a 0 ms \`setTimeout\` after about 1 ms): cockatiel's \`ConstantBackoff(0)\`, p-retry's \`minTimeout: 0\`, \`setTimeout(0)\` in the hand loop, and failwise with \`backoff: { initialMs: 0, maxMs: 0 }\` on \`systemClock\` (real \`Date.now()\` and timers), which is what the ratios use. failwise's lean executor runs a 0 ms wait without a host timer (issue 10, item 4; test/engine/timers.test.ts), so it waits no millisecond where the peers wait one: that, not a cheaper engine, is most of the difference. The microClock row (0 ms timers as microtasks) is for reference. Every batch is checked: two sends per call, every call ending in the 204. ${roundNote(results.retry)}.`,
    '',
    retry,
    '',
    '## 3. Memory per request in flight',
    '',
    `${fmt(results.memory.requests)} interactive GETs start at once against a transport that answers only when the attempt's signal aborts (policy \`budgetMs\` and \`timeouts.attemptMs\` 600 s, so no timer fires while measuring; systemClock). Heap used is read after \`gc()\` (node \`--expose-gc\`) before the first request and once the transport has seen all of them; the difference over the count is the cost of one request in flight, its pending promise included. Then \`client.close()\` must end every one. For scale, the same number of requests made by a hand-written loop that can cut an attempt (per request an \`AbortController\` and a 600 s attempt timer around the same transport), measured the same way after failwise's: on Node an \`AbortSignal\` with one listener alone holds more than 1 KiB, so that loop is the floor under any client whose attempts can be aborted, and issue 10's 1 KiB is below it. What the heap still holds after close is, in a heap snapshot, mostly Node's own: the tables of the WeakMap and WeakSet behind \`DOMException\` and trusted events, grown by the 10,000 aborts.`,
    '',
    memory,
    '',
    '## 4. Loopback HTTP throughput',
    '',
    `A node:http server in a child process (its own core) on 127.0.0.1 answers 204. ${results.loopback.concurrency} concurrent callers share ${fmt(results.loopback.requestsPerRound)} requests per round: raw \`fetch\` (reading the body) against failwise's default fetch transport (\`createFailoverClient\` from the Node entry, an \`allowInsecure\` http origin). Both go through Node's global undici pool. Rounds alternate fetch, fetch with a timeout, failwise, failwise over node:http, after one warm-up round of 1,000 each; the ratio is of the median rounds. Raw fetch can never cut a hung attempt short; the second row is raw fetch with what that takes (an \`AbortController\` passed to fetch and a 5 s timer per request, cleared once the body is read), for scale: failwise always has an attempt timeout, so that row, not raw fetch, is the floor under its figure. The last row is the same failwise client over failwise/node's \`nodeHttpTransport()\` (node:http, a keep-alive agent), which a Node service can choose: it does not go through undici's fetch (its \`Request\`, its body stream, its own signal per request), which is where most of a fetch's CPU time goes in a profile of this run's failwise rounds. A 204 has no body, so those rows leave out what reading one costs; the second table is the same rounds' requests for \`/json\`, a 200 with a ${fmt(results.loopback.jsonBytes)}-byte JSON body and its \`Content-Length\`, raw fetch against failwise, each reading the body with \`json()\` and checking it (interleaved with the rows above, one round each per round). failwise's fetch transport reads such a body within the attempt, so that a body cut mid-way is a failed attempt it may retry, and hands the app a \`Response\` over those bytes, which on Node answers \`json()\` from them (src/transports/bytes-response.ts).`,
    '',
    loopback,
    '',
    '## 5. Under load',
    '',
    `${fmt(results.load.requests)} GETs start at once against the same server; every other one carries \`?fail=<id>\` and gets a 503 on its first attempt, then 204. failwise (a new client per round, default policy but \`backoff: { initialMs: 0, maxMs: 0 }\`, 3 attempts, its retry budget and origin health on) against a raw loop over \`fetch\` (3 attempts on a 503 or an error, \`setTimeout(0)\` between). Rounds alternate raw loop, failwise, and before each the server closes its idle keep-alive connections, so every round opens its connections afresh (reused, some met the server's 5 s keep-alive timeout closing them, in both clients); the ratio is of the median wall times. failwise's failed attempts and health changes are counted from its decision events (\`onEvent\`; their redaction is in its time). Attempts are counted by each client (failwise: from its outcomes) and by the server; an attempt the server did not see failed on the connection (undici's \`UND_ERR_SOCKET\`, failwise's \`connection-lost\`). The event-loop delay is the longest stall \`monitorEventLoopDelay\` saw in the client process during the round; starting every request in one turn is most of it.`,
    '',
    load,
    '',
    '## 6. Bundle sizes',
    '',
    "`measureBundle` from scripts/check-bundle-size.ts (esbuild, platform browser, ESM, minified, tree-shaken; gzip level 9). Everything: the `failwise` entry, src/index.ts, with every export kept. Minimal app: bench/fixtures/minimal-app.ts imports only `createFailoverClient` and makes interactive requests over two origins. Own code is the total minus a bundle of just the xstate and zod exports it imports. The last two columns build the same entries with rolldown 1.2 (scripts/rolldown-bundle.ts), the bundler Vite builds apps with. The difference up front is mostly `memoryStore` (with its entry checks) and `memoryCache`: the `failwise` entry exports them and the lazy durable-work and cached-reads chunks use them; esbuild places a module by which entries reach it through static imports, used or not, so it puts them in a chunk the minimal app loads up front, where rolldown keeps them in the lazy chunks (test/build/bundle-size.test.ts). Issue 10's figures are esbuild's, the larger.",
    '',
    bundle,
    '',
    '## Before the lean executor',
    '',
    BEFORE,
    '',
    '## Before the second round of issue 10',
    '',
    BEFORE_ROUND_TWO,
    '',
    '## Before the third round of issue 10',
    '',
    BEFORE_ROUND_THREE,
    '',
    '## Before the fourth round of issue 10',
    '',
    BEFORE_ROUND_FOUR,
    '',
    '## Before the fifth round of issue 10',
    '',
    BEFORE_ROUND_FIVE,
    '',
    '## Before the sixth round of issue 10',
    '',
    BEFORE_ROUND_SIX,
    '',
    '## Many senders on PostgreSQL',
    '',
    MANY_SENDERS,
  ].join('\n')}\n`;
}

/**
 * The same benchmark on the engine issue 10 replaced (one XState actor per request): commit 9a83da2 built to
 * dist/, with this bench/ and scripts/check-bundle-size.ts copied in, run with `node --expose-gc --import tsx
 * bench/run.ts` on 2026-12-01 22:14 UTC, on the machine of the figures above. Kept as written: it does not
 * change with later runs.
 */
const BEFORE = [
  'Commit 9a83da2 (an XState actor per request), built and measured with this bench on 2026-12-01 22:14 UTC,',
  'on the same machine:',
  '',
  '| figure                       |                              before |     target |',
  '| ---------------------------- | ----------------------------------: | ---------: |',
  '| success path, failwise mean  | 600 µs (cockatiel + timeout: 45 µs) |            |',
  '| `successOverheadVsCockatiel` |                             13.24 x |  <= 1.00 x |',
  '| `retryOverheadVsCockatiel`   |                   1.79 x (2,350 µs) |  <= 1.00 x |',
  '| `bytesPerInflight`           |                            12,507 B | <= 1,024 B |',
  '| `loopbackThroughputVsFetch`  |                              0.31 x |  >= 0.95 x |',
  '| `loadTimeVsRawLoop`          |                              2.44 x |  <= 1.20 x |',
  '| `bundleEverythingKB`         |                42.00 KB (one chunk) |   <= 30 KB |',
  '| `bundleMinimalKB`            |                            41.50 KB |   <= 16 KB |',
].join('\n');

/**
 * The second round of issue 10 (the timer queue, no key-adding spreads, leaner runs, a leaner fetch transport,
 * smaller tables and schema): commit 78b7af8 and the round's code measured one after the other with this bench
 * (78b7af8 built to dist/, this bench/ and scripts/check-bundle-size.ts copied in, `node --expose-gc --import tsx
 * bench/run.ts`) on 2026-12-02 07:34 and 07:35 UTC, while other work ran on the machine. Kept as written.
 */
const BEFORE_ROUND_TWO = [
  'Commit 78b7af8 and the round after it, measured one after the other on 2026-12-02 07:34 and 07:35 UTC, on',
  'the same machine (busy with other work, so absolute figures are high; compare within a row):',
  '',
  '| figure                                             |          78b7af8 |  after the round |',
  '| -------------------------------------------------- | ---------------: | ---------------: |',
  '| success path, failwise mean (cockatiel + timeout)  | 15.20 µs (15.73) |  9.38 µs (14.44) |',
  '| `successOverheadVsCockatiel`                       |           0.97 x |           0.65 x |',
  '| failwise ÷ hand-written loop, success path         |           26.1 x |           16.9 x |',
  '| retry path, failwise mean                          |         39.19 µs |         21.56 µs |',
  '| `bytesPerInflight` (hand-written loop in the run)  |  5,685 B (2,140) |  4,206 B (2,170) |',
  '| `loopbackThroughputVsFetch` (÷ fetch with timeout) |    0.56 x (0.81) |    0.71 x (0.83) |',
  '| `loadTimeVsRawLoop`                                |           1.26 x |           1.06 x |',
  '| `bundleMinimalKB` / `bundleEverythingKB`           | 29.35 / 38.19 KB | 28.92 / 37.65 KB |',
].join('\n');

/**
 * The third round of issue 10 (a request in flight as one object, machines prepared once per client, fetch's own
 * Response when it has no body): commit 7ccd8e0 built to dist/ in a worktree with this bench/ and run with `node
 * --expose-gc --import tsx bench/run.ts`, one run after the other with this round's code, on 2026-12-02 21:00 and
 * 21:01 UTC. Kept as written.
 */
const BEFORE_ROUND_FOUR = [
  "Commit 03d6aa8 (before this round) against this round's code, side by side in one process with `npm run bench:compare -- <checkout of 03d6aa8> 16` (bench/compare.ts: both bundled with esbuild, 16 interleaved rounds of 10,000 successes each; allocation from V8's sampling heap profiler, collected objects counted), five runs on 2026-12-02 and 03, quiet machine:",
  '',
  '| figure                                      |      03d6aa8 |   this round |          ratio |',
  '| ------------------------------------------- | -----------: | -----------: | -------------: |',
  '| success path, µs per request (median round) | 17.8 to 23.7 | 17.1 to 19.0 | 0.75 to 0.96 x |',
  '| bytes allocated per request                 |       14,400 |        9,300 | 0.64 to 0.65 x |',
  '| heap per request in flight                  |        3,280 |        3,270 | 1.00 to 1.02 x |',
  '',
  "The ratio's median over the five runs is 0.83. This round changed the lean executor only: a step's effects are codes and arguments in one list instead of a closure each, an exit set is a bitmask instead of a sorted array, a transition enabled alone is returned as a list made once, an invoked actor's done and error event types are made once per table instead of per answer, and one arguments object serves a selection's guards and one an action list. The heap per request in flight did not move; `bytesPerInflight` in this bench reads about 3,560 B for both commits when measured the same minute (it read 3,466 B for 03d6aa8 at 21:37: the figure moves by about 100 B with the state of the machine). The bundles grew by 0.33 KB gzip (the effects' `switch`, the masks, and errors that name what the executor refuses); the same entries built with rolldown, Vite's bundler, are the last two columns of section 6.",
].join('\n');

const BEFORE_ROUND_FIVE = [
  "Section 4's second table (a 1 KB JSON body read with `json()`) was added in this round, and first run on the code before it (commit df20cb6: the same bench, the transports handing on a body read within the attempt as `new Response(bytes)`), twice on 2026-12-03 at about 06:17 UTC:",
  '',
  '| run | raw fetch, median req/s | failwise, median req/s | failwise ÷ raw fetch |',
  '| --: | ----------------------: | ---------------------: | -------------------: |',
  '|   1 |                   4,628 |                  2,284 |               0.49 x |',
  '|   2 |                   4,360 |                  2,044 |               0.47 x |',
  '',
  "A profile put the difference in the `Response` the transport made: undici wraps its bytes in a new `ReadableStream`, which the app's `json()` then reads back through, about 25 µs per response on Node 20. This round's Node transports hand on a `Response` subclass (src/transports/bytes-response.ts) that answers `json()`, `text()`, `arrayBuffer()` and `bytes()` from the bytes; section 4 shows the figure since. Those figures, from separate minutes, move more with the machine than with the change, and side by side in one process (`npm run bench:compare`) its effect on loopback is within what the tool reads for a checkout against itself (docs/design.md); measured in isolation it saves about 20 µs per 1 KB JSON response. The 204 rows above it do not read a body and did not change.",
].join('\n');

const BEFORE_ROUND_SIX = [
  "This round added section 1's second table (the success path between waits, by CPU per call) and changed the lean executor once: a mailbox or list of raised events, once emptied, is dropped rather than kept while the run waits. Measured with `npm run bench:compare -- <checkout of 779321a> 16` (the commit before that change, side by side in one process, which now also measures CPU per request between waits) on 2026-12-03 at 09:05 UTC:",
  '',
  '| figure                                      | 779321a | this round |   ratio |',
  '| ------------------------------------------- | ------: | ---------: | ------: |',
  '| heap per request in flight                  | 3,270 B |    3,102 B | 0.949 x |',
  '| success path, µs per request (median round) |   16.64 |      15.93 | 0.957 x |',
  '| CPU µs per request between waits (median)   |   248.5 |      242.3 | 0.975 x |',
  '| bytes allocated per request                 |   9,358 |      9,325 | 0.996 x |',
  '',
  "The heap figure is the change's (three runs of bench/memory.ts each, before and after: 3,545 to 3,588 B, then 3,378 to 3,395 B); the time figures moved within the tool's own spread (this checkout against itself, a minute later: 0.913 x for the success path, 0.951 x between waits). Section 1's second table is new, so it has no figure from before.",
].join('\n');

const BEFORE_ROUND_THREE = [
  "Commit 7ccd8e0 (before this round) and this round's code, built and measured one after the other with this bench on 2026-12-02 at 21:00 and 21:01 UTC, on a quiet machine:",
  '',
  '| figure                                                  |            7ccd8e0 |         this round |',
  '| ------------------------------------------------------- | -----------------: | -----------------: |',
  '| `successOverheadVsCockatiel` (without timeout)          |      0.62 x (6.49) |      0.66 x (6.66) |',
  '| `retryOverheadVsCockatiel`                              |             0.04 x |             0.04 x |',
  '| `bytesPerInflight` (hand-written loop in the run)       |    4,211 B (2,170) |    3,580 B (2,170) |',
  '| `loopbackThroughputVsFetch` (÷ fetch with timeout)      |      0.81 x (0.65) |      0.76 x (0.77) |',
  '| the same, three more pairs of runs (bench/http.ts only) | 0.62, 0.68, 0.61 x | 0.71, 0.56, 0.82 x |',
  '| `loadTimeVsRawLoop`                                     |             1.04 x |             1.13 x |',
  '| `bundleMinimalKB` / `bundleEverythingKB`                |   32.29 / 44.23 KB |   32.57 / 44.45 KB |',
  '',
  "This round made a request in flight one object with methods (src/runtime/request-run.ts) instead of four closures and their contexts, prepared each machine once per client instead of handing every run an options object and callbacks, stamped an attempt's result with one function of the client, and handed over fetch's own `Response` when it has no body (no copy of its headers). Heap per request in flight fell by 631 B (15 %); what failwise holds above the hand-written loop's floor fell from 2,041 to 1,410 B (31 %). The time figures did not move beyond their spread from run to run: the loopback ratio, in particular, ranges from 0.56 to 0.82 between runs a minute apart on both sides. The bundles grew by 0.28 KB gzip (minimal app) and 0.22 KB (everything): the request's methods name the client's parts as properties, which minify less than the closure variables they replace.",
  '',
  "Where the loopback time goes. A CPU profile of 35,000 failwise requests and of as many raw fetches with a timeout (50 at a time, quiet machine, before the last change of this round) puts about 112 µs more per request on failwise's side: about 35 µs in the lean executor's steps, 10 µs in rebuilding the `Response` of a body-less answer (since removed), 9 µs in the fetch transport's own function, 8 µs more garbage collection, and the rest spread over promise reactions and undici. The same engine costs about 14 µs a request in the success-path benchmark, where it runs in a tight loop: between socket reads it runs 2 to 3 times slower. `strace -c` counts the same system calls for both (5,070 writes and 5,315 reads for 5,000 requests): failwise changes nothing on the wire.",
].join('\n');

/**
 * `npm run bench:pg` (bench/pg-throughput.ts, issue 16), run on its own: its figures are kept as written, so that
 * `npm run bench` does not drop them when it rewrites docs/benchmarks.md.
 */
export const MANY_SENDERS = [
  "`npm run bench:pg` (bench/pg-throughput.ts; not part of `npm run bench`, and kept here as written): worker processes (bench/pg-worker.ts, each a failwise client on a `postgresStore`, `order: 'per-key'`, no orderKeys) share one outbox of 400 pending entries on a PostgreSQL 15 server the script starts (initdb defaults, `fsync=off`, loopback); a loopback origin in the script's process answers every POST after 20 ms. Timed from `go` (every worker's store already open, durable work already loaded) until the origin has seen every entry; each round checks that every entry reached the origin exactly once. 1 and 3 workers alternate, 3 rounds each after a warm-up; medians. Each `durable.concurrency` is measured in turn: 1 (the policy's default), where a worker waits on the origin and the store, and 4, where one worker keeps its CPU busier. It also counts the claims the workers asked of the store (1 per entry when alone; more is the cost of sharing the queue) and the workers' CPU time per entry (`process.cpuUsage`, all workers together).",
  '',
  'Measured on 2026-12-02 17:41 UTC, Node v20.20.2, linux x64, 2 cores, on a quiet machine (load average 0.4 at the start, 2.6 at the end):',
  '',
  '| `durable.concurrency` per worker | workers | median time | entries / s | ratio to one worker | claims asked per entry | worker CPU per entry |   target |',
  '| -------------------------------: | ------: | ----------: | ----------: | ------------------: | ---------------------: | -------------------: | -------: |',
  '|                                1 |       1 |   10,673 ms |          37 |              1.00 x |                   1.00 |              5.78 ms |          |',
  '|                                1 |       3 |    3,864 ms |         104 |          **2.76 x** |                   1.20 |              6.79 ms | >= 2.5 x |',
  '|                                4 |       1 |    2,878 ms |         139 |              1.00 x |                   1.00 |              4.25 ms |          |',
  '|                                4 |       3 |    2,674 ms |         150 |              1.08 x |                   1.38 |              8.05 ms |          |',
  '',
  'Entries each of the 3 workers sent, per round: at concurrency 1, 131 / 135 / 131; 133 / 132 / 133; 133 / 135 / 130; at 4, 136 / 117 / 141; 130 / 120 / 144; 117 / 135 / 139. Store calls of the 3 workers together at concurrency 1, per round: claimed 400, taken 14, missing 53, heldElsewhere 9, gone 32; claimed 400, taken 45, missing 57, heldElsewhere 18, gone 33; claimed 400, taken 19, missing 61, heldElsewhere 14, gone 37 (no `stale`).',
  '',
  "Before this session's outbox changes, in the same quiet window (the commit before them, b37ac43, concurrency 1 only): 1 worker 10,157 ms (39 entries / s, 4.64 ms of CPU per entry), 3 workers 3,917 ms (102 / s, 6.95 ms): **2.59 x**, 1.25 claims per entry. At concurrency 4 the last measurement before them (15:25 UTC, also quiet) gave 1.03 x.",
  '',
  "**Reading it.** At the default concurrency a worker's throughput is set by the origin's 20 ms and the two store round trips of each entry (its claim and its removal), and three workers deliver 2.76 times what one does: the claims keep them apart (1.2 claims asked per entry). At concurrency 4 one worker alone already keeps most of a core busy (139 entries a second at 4.25 ms each), so three workers, PostgreSQL and the origin share the machine's 2 cores, and 3 workers deliver 1.08 x: on this machine the limit there is CPU, not the claims (1.38 per entry). The first measurement (11:27 UTC, load 12 to 20: 0.55 x at concurrency 4) had three workers asking for about 5 claims per entry. Since then a claim is one named statement that answers the claimed row, a runner told `missing` forgets every entry another runner finished in one call (`claims.gone`), `taken` is answered while another runner holds an entry, and runners walk unkeyed entries in orders of their own (src/runtime/claim-spread.ts). A CPU profile of one worker at concurrency 4 (`PG_BENCH_PROF=<dir> npx tsx bench/pg-throughput.ts --workers 1 --concurrency 4`, 15:58 UTC, before this session's outbox changes) put 16 % of its busy time in the kernel's socket writes (`writev`, to PostgreSQL and the origin), 9 % in the lean executor, 6 % in the outbox machine's steps and 6 % in garbage collection.",
  '',
  '### The outbox per entry, as its queue grows',
  '',
  "`npm run bench:drain` (bench/outbox-drain.ts): a client on a `memoryStore` that already holds `n` pending entries drains them through a transport that answers 201 at once (`durable.concurrency: 4`, `order: 'per-key'`); time and the process's CPU time per entry sent. Work that does not depend on the queue's length keeps the figure flat; work that scans the queue on every step makes it grow with `n`. Two runs each of this session's code and of the commit before it (b37ac43), interleaved, in the same quiet window (17:42 UTC), one round per run:",
  '',
  '| queue length | per entry, before (run 1 / run 2) | per entry, now (run 1 / run 2) |',
  '| -----------: | --------------------------------: | -----------------------------: |',
  '|          100 |                      882 / 870 µs |                 831 / 1,033 µs |',
  '|        1,000 |                      914 / 784 µs |                   837 / 839 µs |',
  '|        5,000 |                  2,981 / 2,424 µs |               1,244 / 1,327 µs |',
  '',
  "Before, every step of the outbox machine ran `planDispatch` (through its guards and `dispatchDue`) and `nextWakeAt` over the whole queue, several times: at 5,000 entries an entry cost 2.8 to 3.4 times what it cost at 100. Now the facts every step asks (entries in flight, sending slots used, the oldest pending entry, whether one has used its attempts) are kept once per queue array (machines/outbox/queue-facts.ts), `planDispatch` stops once nothing more can start, and `nextWakeAt` walks again only once its answer has passed: 1.3 to 1.5 times. What still grows is a copy of the queue array per change of an entry (the machine's context is immutable).",
].join('\n');
