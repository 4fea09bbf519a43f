// The pure half of `npm run bench` (bench/report.ts), from fixed figures: nothing here is timed.
import { format, resolveConfig } from 'prettier';
import { describe, expect, it } from 'vitest';

import {
  SUMMARY_KEYS,
  TARGETS,
  meetsTarget,
  median,
  renderMarkdown,
  betweenWaitsRatios,
  renderTable,
  sections,
  summarize,
  summaryLine,
  type BenchResults,
  type PeerId,
  type TimingRow,
} from '../../bench/report.js';

const timing = (meanUs: Partial<Record<PeerId, number>>) => ({
  roundMs: 100,
  rows: (Object.keys(meanUs) as PeerId[]).map((id): TimingRow => ({
    id,
    meanUs: meanUs[id]!,
    // Not the mean: a table that showed one for the other would be caught.
    medianUs: meanUs[id]! * 0.95,
    minUs: meanUs[id]! * 0.9,
    maxUs: meanUs[id]! * 1.1,
    calls: 1_000,
    rounds: 10,
  })),
});

const RESULTS: BenchResults = {
  meta: {
    date: '2026-01-02 03:04 UTC',
    node: 'v20.20.2',
    platform: 'linux x64',
    cpuModel: 'Test CPU',
    cores: 2,
    command: 'npm run bench',
    durationS: 120,
  },
  success: timing({
    failwise: 900,
    failwiseMicroClock: 850,
    failwiseOtel: 905,
    handLoop: 2,
    cockatiel: 90,
    cockatielNoTimeout: 4.5,
    pRetry: 12,
  }),
  successBetweenWaits: {
    ...timing({
      failwise: 400,
      failwiseMicroClock: 390,
      failwiseOtel: 520,
      handLoop: 160,
      cockatiel: 500,
      cockatielNoTimeout: 250,
      pRetry: 300,
      waitAlone: 100,
    }),
    roundMs: 2_400,
    waitMs: 2,
  },
  retry: timing({
    failwise: 3_000,
    failwiseMicroClock: 1_700,
    failwiseOtel: 3_020,
    handLoop: 1_250,
    cockatiel: 1_500,
    cockatielNoTimeout: 1_200,
    pRetry: 1_300,
  }),
  memory: {
    requests: 10_000,
    heapDeltaBytes: 10_000 * 16_500,
    bytesPerInflight: 16_500,
    handLoopBytesPerInflight: 1_500,
    retainedAfterCloseBytes: 150 * 1024,
    startMs: 7_000,
    closeMs: 2_000,
    allEnded: true,
    outcomes: { 'failed:cancelled': 10_000 },
  },
  loopback: {
    requestsPerRound: 5_000,
    concurrency: 50,
    fetchPerSecond: [2_000, 2_500, 3_000],
    fetchWithTimeoutPerSecond: [1_800, 2_250, 2_700],
    failwisePerSecond: [800, 1_000, 600],
    failwiseNodeHttpPerSecond: [2_600, 3_200, 2_900],
    jsonFetchPerSecond: [1_000, 1_200, 1_400],
    jsonFailwisePerSecond: [900, 600, 700],
    jsonBytes: 1_024,
    jsonWrong: 0,
    fetchErrors: 0,
    failwiseNotSucceeded: {},
  },
  load: {
    requests: 3_000,
    rounds: [2_000, 4_000, 3_000].map((rawLoopMs, i) => ({
      rawLoopMs,
      failwiseMs: rawLoopMs * 2,
      rawLoopMaxLoopDelayMs: 40,
      failwiseMaxLoopDelayMs: 900,
      rawLoopOutcomes: { succeeded: 3_000 },
      failwiseOutcomes: {
        succeeded: 2_000 - i,
        'failed:retry-budget-exhausted': 1_000,
        ...(i > 0 ? { 'failed:budget-exhausted': i } : {}),
      },
      failwiseAttempts: 3_500,
      rawLoopAttempts: 4_500,
      rawLoopAttemptFailures: { 'status 503': 1_500 },
      failwiseAttemptFailures: { 'unavailable 503': 1_500 },
      failwiseHealthChanges: {},
      rawLoopServerRequests: 4_500,
      failwiseServerRequests: 3_500,
    })),
  },
  bundle: {
    everything: {
      entry: 'src/index.ts',
      totalGzipBytes: 43_008,
      upFrontGzipBytes: 40_960,
      ownGzipBytes: 23_552,
      rolldown: { upFrontGzipBytes: 39_936, totalGzipBytes: 41_984 },
    },
    minimal: {
      entry: 'bench/fixtures/minimal-app.ts',
      totalGzipBytes: 9_216,
      upFrontGzipBytes: 8_192,
      ownGzipBytes: 4_096,
      rolldown: { upFrontGzipBytes: 7_168, totalGzipBytes: 8_704 },
    },
  },
};

describe('bench report', () => {
  it('summarizes every figure the targets name, as ratios of the fixed inputs', () => {
    expect(summarize(RESULTS)).toEqual({
      successOverheadVsCockatiel: 10,
      successOverheadVsCockatielNoTimeout: 200,
      retryOverheadVsCockatiel: 2,
      retryOverheadVsCockatielNoTimeout: 2.5,
      bytesPerInflight: 16_500,
      loopbackThroughputVsFetch: 0.32, // median 800 / median 2,500
      loadTimeVsRawLoop: 2,
      budgetExhaustedUnderLoad: 2, // the worst round
      bundleEverythingKB: 42,
      bundleMinimalKB: 8,
    });
  });

  it('gives the success path between waits as ratios of CPU per call, beside the summary', () => {
    // failwise 400 µs ÷ cockatiel 500 µs, ÷ hand loop 160 µs
    expect(betweenWaitsRatios(RESULTS.successBetweenWaits)).toEqual({
      successCpuBetweenWaitsVsCockatiel: 0.8,
      successCpuBetweenWaitsVsHandLoop: 2.5,
    });
  });

  it('prints the summary as one JSON line with every required key', () => {
    const line = summaryLine(summarize(RESULTS), { failwiseClock: 'systemClock' });
    expect(line).not.toContain('\n');
    const parsed = JSON.parse(line) as Record<string, unknown>;
    for (const key of [
      'successOverheadVsCockatiel',
      'retryOverheadVsCockatiel',
      'bytesPerInflight',
      'loopbackThroughputVsFetch',
      'loadTimeVsRawLoop',
      'bundleEverythingKB',
      'bundleMinimalKB',
      'successOverheadVsCockatielNoTimeout',
      'retryOverheadVsCockatielNoTimeout',
      'budgetExhaustedUnderLoad',
    ]) {
      expect(typeof parsed[key], key).toBe('number');
    }
    expect(Object.keys(parsed).slice(0, SUMMARY_KEYS.length)).toEqual(SUMMARY_KEYS);
    expect(parsed.failwiseClock).toBe('systemClock');
  });

  it('checks the targets in both directions', () => {
    expect(meetsTarget('successOverheadVsCockatiel', 1)).toBe(true);
    expect(meetsTarget('successOverheadVsCockatiel', 1.01)).toBe(false);
    expect(meetsTarget('loopbackThroughputVsFetch', 0.95)).toBe(true);
    expect(meetsTarget('loopbackThroughputVsFetch', 0.94)).toBe(false);
    expect(meetsTarget('budgetExhaustedUnderLoad', 0)).toBe(true);
    expect(meetsTarget('budgetExhaustedUnderLoad', 1)).toBe(false);
    expect(TARGETS.bytesPerInflight.limit).toBe(1024);
    expect(TARGETS.bundleMinimalKB.limit).toBe(16);
    expect(TARGETS.bundleEverythingKB.limit).toBe(30);
    expect(TARGETS.loadTimeVsRawLoop.limit).toBe(1.2);
    // "aim for 2 x cockatiel without one"
    expect(TARGETS.successOverheadVsCockatielNoTimeout.limit).toBe(2);
    expect(TARGETS.retryOverheadVsCockatielNoTimeout.limit).toBe(2);
    expect(meetsTarget('successOverheadVsCockatielNoTimeout', 2)).toBe(true);
    expect(meetsTarget('successOverheadVsCockatielNoTimeout', 2.01)).toBe(false);
  });

  it('takes medians of odd and even counts', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('renders a padded Markdown table, right-aligned columns marked', () => {
    expect(
      renderTable(
        ['a', 'value'],
        [
          ['long name', '1'],
          ['b', '22'],
        ],
        ['left', 'right'],
      ),
    ).toBe(
      [
        '| a         | value |',
        '| --------- | ----: |',
        '| long name |     1 |',
        '| b         |    22 |',
      ].join('\n'),
    );
  });

  it('renders a console table per section, the summary last', () => {
    const titles = sections(RESULTS).map((section) => section.title);
    expect(titles).toHaveLength(7);
    expect(titles.at(-1)).toBe('Summary against the targets');
    expect(sections(RESULTS).every((section) => section.table.startsWith('| '))).toBe(true);
  });

  describe('docs/benchmarks.md', () => {
    const markdown = renderMarkdown(RESULTS);

    it('says when, where and how it was measured', () => {
      expect(markdown).toContain(
        '`npm run bench` on 2026-01-02 03:04 UTC: Node v20.20.2, linux x64, 2 cores',
      );
    });

    it('has the summary table with a measured and a target column, a row per figure', () => {
      const summary = markdown.split('## Summary')[1]!.split('\n## ')[0]!;
      expect(summary).toMatch(/^\| figure +\| what +\| measured \| +target \| met \|$/m);
      for (const key of SUMMARY_KEYS) expect(summary).toMatch(new RegExp(`^\\| \`${key}\` +\\|`, 'm'));
      expect(summary).toMatch(/^\| `bytesPerInflight` +\|[^|]+\| +16,500 B \| +<= 1,024 B \| no +\|$/m);
      expect(summary).toMatch(/^\| `bundleMinimalKB` +\|[^|]+\| +8\.00 KB \| +<= 16 KB \| yes +\|$/m);
      expect(summary).toMatch(/^\| `budgetExhaustedUnderLoad` +\|[^|]+\| +2 \| +0 \| no +\|$/m);
    });

    it('has a section with its table for each measurement', () => {
      for (const heading of [
        '## 1. Success path',
        '## 2. Retry path',
        '## 3. Memory per request in flight',
        '## 4. Loopback HTTP throughput',
        '## 5. Under load',
        '## 6. Bundle sizes',
      ])
        expect(markdown).toContain(`\n${heading}\n`);
      expect(markdown).toContain('| p-retry 6 ');
      expect(markdown).toContain('failed:retry-budget-exhausted 1,000');
    });

    it('shows the success path between waits after the tight loop, by CPU per call', () => {
      const success = markdown.split('## 1. Success path')[1]!.split('\n## ')[0]!;
      const [tight, waits] = success.split('**Between waits.**');
      expect(tight).toMatch(/^\| failwise client\.request \(systemClock\) +\| +900\.00 \|/m);
      expect(waits).toContain('after a real 2 ms timer');
      expect(waits).toContain('10 interleaved rounds of 100 calls per peer (about 2,400 ms each)');
      expect(waits).toMatch(/^\| peer, each answer after a wait +\| mean CPU µs \|/m);
      // mean 400, median 380; 300 above the wait alone's 100; 400 ÷ cockatiel's 500, ÷ the hand loop's 160
      expect(waits).toMatch(
        /^\| failwise client\.request \(systemClock\) +\| +400\.0 \| +380\.0 \| +360\.0–440\.0 \| +300\.0 \| +0\.80 \| +2\.5 \| +1,000 \|$/m,
      );
      expect(waits).toMatch(
        /^\| cockatiel retry \+ breaker \+ timeout +\| +500\.0 \|.*\| +400\.0 \| +1\.00 \| +3\.1 \|/m,
      );
      // The wait alone has no figure above itself, and is not in the tight loop's table.
      expect(waits).toMatch(
        /^\| the wait alone \(the send, nothing around it\) +\| +100\.0 \| +95\.0 \| +90\.0–110\.0 \| +\| +0\.20 \|/m,
      );
      expect(tight).not.toContain('the wait alone');
    });

    it('shows raw fetch with a timeout beside raw fetch in the loopback table', () => {
      const loopback = markdown.split('## 4. Loopback HTTP throughput')[1]!.split('\n## ')[0]!;
      // median 2,250 / median 2,500
      expect(loopback).toMatch(
        /^\| raw fetch with a timeout \(AbortController \+ timer\) +\| +2,250 \| +0\.90 \|/m,
      );
      // median 2,900 / median 2,500
      expect(loopback).toMatch(
        /^\| failwise over `nodeHttpTransport\(\)` \(failwise\/node\), for reference +\| +2,900 \| +1\.16 \|/m,
      );
    });

    it('shows the JSON-body rounds in a table of their own, against raw fetch of the same body', () => {
      const loopback = markdown.split('## 4. Loopback HTTP throughput')[1]!.split('\n## ')[0]!;
      expect(loopback).toContain('a 200 with a 1,024-byte JSON body');
      expect(loopback).toMatch(/^\| client, `\/json` read with `json\(\)` +\| median req\/s \|/m);
      expect(loopback).toMatch(/^\| raw fetch +\| +1,200 \| +1\.00 \| +1,000, 1,200, 1,400 \| 0 +\|$/m);
      // median 700 / median 1,200
      expect(loopback).toMatch(
        /^\| failwise \(default fetch transport\) +\| +700 \| +0\.58 \| +900, 600, 700 \|/m,
      );
    });

    it('shows each bundle built by esbuild and by rolldown', () => {
      const bundles = markdown.split('## 6. Bundle sizes')[1]!.split('\n## ')[0]!;
      expect(bundles).toMatch(/^\| bundle +\| entry +\|.*\| rolldown: up front \| rolldown: all chunks \|$/m);
      // esbuild: 8,192 up front, 9,216 in all, 4,096 own; rolldown: 7,168 up front, 8,704 in all.
      expect(bundles).toMatch(
        /^\| minimal app +\| `bench\/fixtures\/minimal-app\.ts` +\| +8\.00 KB \| +9\.00 KB \| +4\.00 KB \| +7\.00 KB \| +8\.50 KB \|$/m,
      );
      expect(bundles).toMatch(
        /^\| everything +\| `src\/index\.ts` +\| +40\.00 KB \| +42\.00 KB \| +23\.00 KB \| +39\.00 KB \| +41\.00 KB \|$/m,
      );
    });

    it("shows the memory figure next to a hand-written loop's, and their ratio", () => {
      const memory = markdown.split('## 3. Memory per request in flight')[1]!.split('\n## ')[0]!;
      expect(memory).toMatch(
        /^\| the same, hand-written loop \(AbortController \+ timer per request\) +\| +1,500 \|$/m,
      );
      expect(memory).toMatch(/^\| failwise ÷ hand-written loop +\| +11\.00 x \|$/m); // 16,500 / 1,500
    });

    it('is as Prettier would write it, so `prettier --check` passes as generated', async () => {
      const options = (await resolveConfig('docs/benchmarks.md')) ?? {};
      expect(await format(markdown, { ...options, filepath: 'docs/benchmarks.md' })).toBe(markdown);
    });
  });
});
