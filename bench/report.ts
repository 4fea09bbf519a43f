/**
 * The pure half of `npm run bench`: what a run measured (`BenchResults`), the figures the targets name
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

/** The targets. Reported next to the figures; nothing asserts them. */
export const TARGETS: Record<SummaryKey, Target> = {
  successOverheadVsCockatiel: {
    op: '<=',
    limit: 1,
    unit: 'x',
    what: 'success path, failwise mean ÷ cockatiel (with timeout)',
  },
  // "No slower than cockatiel with a timeout (ratio <= 1.0; aim for 2 x cockatiel without one)".
  successOverheadVsCockatielNoTimeout: {
    op: '<=',
    limit: 2,
    unit: 'x',
    what: 'success path, failwise mean ÷ cockatiel without timeout (the aim)',
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
    what: 'retry path, failwise mean ÷ cockatiel without timeout (the aim)',
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

/** The figures the targets name, rounded as printed. */
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
 * over the hand-written loop): extra keys of the JSON line, references rather than targets.
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
    { title: 'Summary against the targets', table: summaryTable(summarize(results)) },
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
    'The targets are shown next to each figure; nothing asserts them.',
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
    `The transport answers 503, then 204. Every peer waits 0 ms between attempts on a real timer (Node runs a 0 ms \`setTimeout\` after about 1 ms): cockatiel's \`ConstantBackoff(0)\`, p-retry's \`minTimeout: 0\`, \`setTimeout(0)\` in the hand loop, and failwise with \`backoff: { initialMs: 0, maxMs: 0 }\` on \`systemClock\` (real \`Date.now()\` and timers), which is what the ratios use. failwise's lean executor runs a 0 ms wait without a host timer (test/engine/timers.test.ts), so it waits no millisecond where the peers wait one: that, not a cheaper engine, is most of the difference. The microClock row (0 ms timers as microtasks) is for reference. Every batch is checked: two sends per call, every call ending in the 204. ${roundNote(results.retry)}.`,
    '',
    retry,
    '',
    '## 3. Memory per request in flight',
    '',
    `${fmt(results.memory.requests)} interactive GETs start at once against a transport that answers only when the attempt's signal aborts (policy \`budgetMs\` and \`timeouts.attemptMs\` 600 s, so no timer fires while measuring; systemClock). Heap used is read after \`gc()\` (node \`--expose-gc\`) before the first request and once the transport has seen all of them; the difference over the count is the cost of one request in flight, its pending promise included. Then \`client.close()\` must end every one. For scale, the same number of requests made by a hand-written loop that can cut an attempt (per request an \`AbortController\` and a 600 s attempt timer around the same transport), measured the same way after failwise's: on Node an \`AbortSignal\` with one listener alone holds more than 1 KiB, so that loop is the floor under any client whose attempts can be aborted, and the 1 KiB target is below it. What the heap still holds after close is, in a heap snapshot, mostly Node's own: the tables of the WeakMap and WeakSet behind \`DOMException\` and trusted events, grown by the 10,000 aborts.`,
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
    "`measureBundle` from scripts/check-bundle-size.ts (esbuild, platform browser, ESM, minified, tree-shaken; gzip level 9). Everything: the `failwise` entry, src/index.ts, with every export kept. Minimal app: bench/fixtures/minimal-app.ts imports only `createFailoverClient` and makes interactive requests over two origins. Own code is the total minus a bundle of just the xstate and zod exports it imports. The last two columns build the same entries with rolldown 1.2 (scripts/rolldown-bundle.ts), the bundler Vite builds apps with. The difference up front is mostly `memoryStore` (with its entry checks) and `memoryCache`: the `failwise` entry exports them and the lazy durable-work and cached-reads chunks use them; esbuild places a module by which entries reach it through static imports, used or not, so it puts them in a chunk the minimal app loads up front, where rolldown keeps them in the lazy chunks (test/build/bundle-size.test.ts). The targets are checked on esbuild's figures, the larger.",
    '',
    bundle,
    '',
    '## Many senders on PostgreSQL',
    '',
    MANY_SENDERS,
  ].join('\n')}\n`;
}

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
  "Before, every step of the outbox machine ran `planDispatch` (through its guards and `dispatchDue`) and `nextWakeAt` over the whole queue, several times: at 5,000 entries an entry cost 2.8 to 3.4 times what it cost at 100. Now the facts every step asks (entries in flight, sending slots used, the oldest pending entry, whether one has used its attempts) are kept once per queue array (machines/outbox/outbox.queue.ts), `planDispatch` stops once nothing more can start, and `nextWakeAt` walks again only once its answer has passed: 1.3 to 1.5 times. What still grows is a copy of the queue array per change of an entry (the machine's context is immutable).",
].join('\n');
