/**
 * The Hermes section of docs/benchmarks.md, from what bench/hermes/script.ts printed: the tables, the ratios
 * against issue 28's targets, and the markers `npm run bench` keeps the section between. Nothing here times or
 * runs the VM.
 */
import { fmt, renderTable, timingTable, type TimingSection } from '../report.js';

export const HERMES_START =
  '<!-- hermes:start (written by `npm run bench:hermes`; bench/hermes/hermes-report.ts) -->';
export const HERMES_END = '<!-- hermes:end -->';

/** What the script prints after `HERMES_BENCH `. */
export interface HermesResults {
  success: TimingSection;
  retry: TimingSection;
}

export interface HermesMeta {
  command: string;
  date: string;
  vm: string;
  hermesc: string;
  durationS: number;
}

/** The script's results, from its output; throws with what it printed when it did not finish. */
export function parseHermesOutput(output: string): HermesResults {
  const line = output.split('\n').find((candidate) => candidate.startsWith('HERMES_BENCH '));
  if (!line) throw new Error(`bench:hermes: the script did not finish:\n${output.trim()}`);
  return JSON.parse(line.slice('HERMES_BENCH '.length)) as HermesResults;
}

const meanOf = (section: TimingSection, id: string): number => {
  const row = section.rows.find((candidate) => candidate.id === id);
  if (!row) throw new Error(`bench:hermes: no ${id} row`);
  return row.meanUs;
};

/** failwise's mean over each peer's, per section: the figures issue 28 sets targets for. */
export function hermesRatios(results: HermesResults) {
  const of = (section: TimingSection) => ({
    cockatiel: meanOf(section, 'failwise') / meanOf(section, 'cockatiel'),
    cockatielNoTimeout: meanOf(section, 'failwise') / meanOf(section, 'cockatielNoTimeout'),
    handLoop: meanOf(section, 'failwise') / meanOf(section, 'handLoop'),
  });
  return { success: of(results.success), retry: of(results.retry) };
}

const ratio = (x: number) => `${fmt(x, 2)} x`;
const met = (x: number, limit: number) => (x <= limit ? 'yes' : 'no');

/** The section, markers included. */
export function hermesSection(results: HermesResults, meta: HermesMeta): string {
  const ratios = hermesRatios(results);
  const summary = renderTable(
    ['figure', 'measured', 'target', 'met'],
    [
      [
        'success path, failwise ÷ cockatiel + timeout',
        ratio(ratios.success.cockatiel),
        '<= 1.00 x',
        met(ratios.success.cockatiel, 1),
      ],
      [
        'retry path, failwise ÷ cockatiel + timeout',
        ratio(ratios.retry.cockatiel),
        '<= 1.00 x',
        met(ratios.retry.cockatiel, 1),
      ],
      [
        'success path, failwise ÷ hand-written loop',
        ratio(ratios.success.handLoop),
        '<= 5.00 x (aim)',
        met(ratios.success.handLoop, 5),
      ],
      [
        'retry path, failwise ÷ hand-written loop',
        ratio(ratios.retry.handLoop),
        '<= 5.00 x (aim)',
        met(ratios.retry.handLoop, 5),
      ],
    ],
    ['left', 'right', 'right', 'left'],
  );
  const { rounds } = results.success.rows[0]!;
  return [
    HERMES_START,
    '',
    '## On Hermes (React Native)',
    '',
    `Measured with \`${meta.command}\` on ${meta.date}, on the Hermes VM ${meta.vm}, bytecode from ${meta.hermesc} (\`-emit-binary -O\`, as a React Native release build); the run took ${fmt(meta.durationS)} s.`,
    '',
    "Sections 1 and 2's scenarios (bench/scenarios.ts, the same in-process server, hand-written loop and cockatiel 3.2 policies; p-retry and OpenTelemetry stay on Node), bundled with esbuild from the sources (bench/hermes/script.ts) after a prelude that brings what React Native adds to the engine (bench/hermes/host.ts: whatwg-fetch's `Response`, and small stand-ins for `AbortController`, `URL` and `queueMicrotask`). failwise runs on `systemClock`. Hermes has no JIT: every closure, object and promise a call makes is paid in full, every call. The VM runs a timer's callback without waiting its delay, so the retry path has no 1 ms wait in it here, unlike on Node. Interleaved rounds (bench/rounds.ts) timed with `Date.now()`, the only clock the bare VM has: " +
      `${rounds} rounds, about ${fmt(results.success.roundMs)} ms per peer per round, after a warm-up; every batch checked as on Node. The ratios are of means. Issue 28's targets are shown; nothing asserts them.`,
    '',
    summary,
    '',
    '### Success path on Hermes',
    '',
    timingTable(results.success),
    '',
    '### Retry path on Hermes (503, then 204)',
    '',
    timingTable(results.retry),
    '',
    HERMES_END,
  ].join('\n');
}

/** `doc` with its Hermes section replaced by `section` (or, if it has none, with `section` at its end). */
export function withHermesSection(doc: string, section: string): string {
  const start = doc.indexOf(HERMES_START);
  const end = doc.indexOf(HERMES_END);
  if (start < 0 || end < start) return `${doc.trimEnd()}\n\n${section}\n`;
  return doc.slice(0, start) + section + doc.slice(end + HERMES_END.length);
}

/** `fresh` (a newly rendered docs/benchmarks.md) with the Hermes section `old` had, if any. */
export function keepHermesSection(fresh: string, old: string): string {
  const start = old.indexOf(HERMES_START);
  const end = old.indexOf(HERMES_END);
  return start < 0 || end < start
    ? fresh
    : withHermesSection(fresh, old.slice(start, end + HERMES_END.length));
}
