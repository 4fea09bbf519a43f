/**
 * The Hermes section of docs/benchmarks.md, from what bench/hermes/script.ts printed: the tables, the ratios
 * against the targets, and the markers `npm run bench` keeps the section between. Nothing here times or
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

/** failwise's mean over each peer's, per section: the figures the targets are set for. */
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

/**
 * This benchmark before the changes made for Hermes (the code of commit fd5ccf0), on the same VM: kept as written,
 * so that later runs can be read against it.
 */
export const HERMES_BEFORE = [
  '### Before the changes for Hermes',
  '',
  '`HERMES_VM=../shared/tools/hermes/hermes npm run bench:hermes -- --write` on 2026-12-04 20:35 UTC, 10 rounds of 300 ms, failwise as of fd5ccf0 (before any change for Hermes), the machine shared with other work:',
  '',
  '| path    | failwise µs | cockatiel + timeout µs | hand loop µs | failwise ÷ cockatiel + timeout | failwise ÷ hand loop |',
  '| ------- | ----------: | ---------------------: | -----------: | -----------------------------: | -------------------: |',
  '| success |       69.68 |                  31.41 |         5.38 |                         2.22 x |              12.96 x |',
  '| retry   |      149.80 |                  61.93 |         8.76 |                         2.42 x |              17.10 x |',
  '',
  "Every cockatiel call with a timeout makes an `AbortController`, and failwise one per attempt; the tables above give both on the harness's small stand-in (bench/hermes/host.ts) and on React Native's own.",
].join('\n');

/** Where failwise's time goes on Hermes, from a profile: kept as written. */
export const HERMES_PROFILE = [
  '### Where the time goes',
  '',
  "Counted in instructions (`valgrind --tool=callgrind` on the VM, deterministic where timings on a shared machine are not: the scenario's client after 20 warm-up requests, 1,200 requests less 200, per request; bench/hermes/host.ts as the host), a successful request costs failwise about 264,200 instructions and cockatiel with a timeout about 270,700 (the hand-written loop 62,100); with one retry, 573,100 against 531,700. failwise also allocates less (`hermes -gc-print-stats`: about 12,100 bytes per successful request, cockatiel with a timeout 26,500, the loop 4,900). Yet it takes about twice the time, because an interpreter without a JIT pays for breadth: cachegrind puts failwise at about 4,200 first-level data-cache misses per request (3,700 of them reads) against cockatiel's 2,600 (1,700 reads), and 8,700 mispredicted branches against 6,700. Hermes reads each function's bytecode as data and dispatches each instruction by an indirect jump, so the more distinct functions and tables a request runs through (the executor's selection, exit, entry and action steps over the request and origin-health tables, the runtime's effects, the policy's checks), the more misses, at the same count of instructions. A sampling profile (`hermes -sample-profiling=chrome`, 3 kHz, 30,000 successful requests) is flat, no function over 5 % of the samples; by the file each sample's function is in (the bundle's module comments): the executor (src/engine) 42 %, the runtime (src/runtime) 19 %, the machines' logic and actions 9 %, the policy 1 %, promise machinery and native built-ins (Hermes implements `Promise` in bytecode) 19 %, the scenario's server with whatwg-fetch's `Response`, which every peer pays alike, 8 %. So an executor that cost nothing would still leave failwise at about 58 % of its time, some 25 µs a request against cockatiel's 23: 1.0 x needs less work outside the executor too. On React Native 0.87 and later's own `AbortController` and `URL` (bench/hermes/host-react-native.ts, 60,000 successful requests, 41 µs each) the executor's share is 41 %, the runtime's 22 %, the machines' 8 %: an executor that cost nothing would leave about 24 µs, cockatiel's cost there. So 1.0 x would take a request that runs its machines at next to no cost, with nothing else growing.",
  '',
  "Breadth, counted (`npm run bench:calls`: V8's call counts on Node over 1,000 requests, in this repository's code and the peer's package, the scenario's server included, about 5 calls for every peer): a successful request makes 238 function calls through 153 distinct functions in failwise, 62 through 32 in cockatiel with a timeout, 8 through 6 in the hand loop; with one retry, 538 through 201 against 123 through 42. About 100 of failwise's 238 are the executor's (src/engine/lean-actor.ts and algorithm.ts), for seven steps of the request machine and one of the origin-health machine. cockatiel's time on Hermes goes to promises instead: it makes 13 promise reactions per successful request to failwise's 4 (`Promise.prototype.then` counted on the VM), and there an `async` function that awaits once costs about 1.8 µs, a plain call 15 to 20 ns (loops of 200,000 on the VM). So cockatiel runs a few functions over and over, failwise many once each; 1.0 x needs a request that takes fewer steps through fewer functions (an executor specialised to a machine's table, say), not more trimming of each.",
  '',
  "Measured the same way in isolation: reading a property an object lacks costs about 320 instructions (a walk up its prototypes) against 60 for one it has, even one that holds `undefined`; a `for...in` over an empty object about 2,800, `Object.keys` of it about 700; `Object.assign` of two keys about 2,400; `new Promise` about 2,700; a small object about 350; `Map.prototype.get` and a method call about 270 and 140; a `Headers.get` on whatwg-fetch's `Headers` about 10,700 (it checks the name with a regular expression, twice), which is why the throttle reads an origin's rate-limit fields only while the origin sends them (docs/policy.md, throttle), and on whatwg-fetch's `Headers` gathers them in one pass over the answer's fields (the retry path's 503: about 29,000 instructions fewer, 5 %). What is left is spread thin: the origin-health machine's step for an attempt's outcome, about 16,000 instructions (10,000 of them the executor's, for a transition with no target and two actions), which cannot be skipped for a success, as it counts toward the failure window; the request's two timers, about 19,000; each of the three eventless states a successful request passes through (`checkingHold`, `checkingRetrySlot`, `evaluating`), about 5,200 (two pass-through states added to the path cost 10,400 more), so folding them into guarded transitions would save about 6 %; each context change written by a `for...in` rather than by name, 1,000 to 3,000. A cut to cockatiel's time needs fewer distinct functions and tables per request, not fewer instructions.",
].join('\n');

/** failwise's ratios against the targets, one row each. */
function summaryTable(results: HermesResults): string {
  const ratios = hermesRatios(results);
  const row = (figure: string, x: number, target: string, limit: number) => [
    figure,
    ratio(x),
    target,
    met(x, limit),
  ];
  return renderTable(
    ['figure', 'measured', 'target', 'met'],
    [
      row('success path, failwise ÷ cockatiel + timeout', ratios.success.cockatiel, '<= 1.00 x', 1),
      row('retry path, failwise ÷ cockatiel + timeout', ratios.retry.cockatiel, '<= 1.00 x', 1),
      row('success path, failwise ÷ hand-written loop', ratios.success.handLoop, '<= 5.00 x (aim)', 5),
      row('retry path, failwise ÷ hand-written loop', ratios.retry.handLoop, '<= 5.00 x (aim)', 5),
    ],
    ['left', 'right', 'right', 'left'],
  );
}

/** The same scenarios on React Native's own `AbortController` and `URL`, each as a generation of apps has them. */
export interface ReactNativeResults {
  /** React Native 0.87 and later: its own `AbortController` over its own `EventTarget` (host-react-native.ts). */
  current: HermesResults;
  /** React Native 0.70 to 0.86: the `abort-controller` package's (host-react-native-before-0.87.ts). */
  before087: HermesResults;
}

/**
 * The same scenarios on React Native's own `AbortController` and `URL`, run right after those on the host's
 * stand-ins: what each peer pays in an app, on React Native 0.87 and later and on 0.70 to 0.86.
 */
function reactNativeSection(results: ReactNativeResults): string[] {
  const hosts = [
    ['0.87 and later', results.current],
    ['0.70 to 0.86', results.before087],
  ] as const;
  return [
    "### With React Native's own AbortController and URL",
    '',
    "The same run, its scenarios again on a host with React Native's own `URL` (react-native/Libraries/Blob/URL.js) and the `AbortController` and `AbortSignal` an app has, in place of the stand-ins: from React Native 0.87, React Native's own, over its own `EventTarget` (react-native/src/private/webapis, bench/hermes/host-react-native.ts); from 0.70 to 0.86, the `abort-controller` package's, over event-target-shim (bench/hermes/host-react-native-before-0.87.ts); each module's exports made once, as Metro makes them (scripts/react-native-flow.ts, `metroRequires`). Every peer that aborts pays what it pays in an app, as cockatiel's timeout does per call and failwise per attempt. The targets, on React Native 0.87 and later:",
    '',
    summaryTable(results.current),
    '',
    '| React Native | path | failwise µs | cockatiel + timeout µs | cockatiel µs | hand loop µs | failwise ÷ cockatiel + timeout |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
    ...hosts.flatMap(([name, host]) => {
      const ratios = hermesRatios(host);
      return (['success', 'retry'] as const).map((path) => {
        const means = ['failwise', 'cockatiel', 'cockatielNoTimeout', 'handLoop'].map((id) =>
          fmt(meanOf(host[path], id), 2),
        );
        return `| ${name} | ${path} | ${means.join(' | ')} | ${ratio(ratios[path].cockatiel)} |`;
      });
    }),
    '',
  ];
}

/**
 * The section, markers included; `reactNative`: the same scenarios on React Native's own `AbortController` and
 * `URL`, when they were run.
 */
export function hermesSection(
  results: HermesResults,
  meta: HermesMeta,
  reactNative?: ReactNativeResults,
): string {
  const summary = summaryTable(results);
  const { rounds } = results.success.rows[0]!;
  return [
    HERMES_START,
    '',
    '## On Hermes (React Native)',
    '',
    `Measured with \`${meta.command}\` on ${meta.date}, on a Hermes VM (${meta.vm}), bytecode from ${meta.hermesc} (\`-emit-binary -O\`, as a React Native release build); the run took ${fmt(meta.durationS)} s.`,
    '',
    "Sections 1 and 2's scenarios (bench/scenarios.ts, the same in-process server, hand-written loop and cockatiel 3.2 policies; p-retry and OpenTelemetry stay on Node), bundled with esbuild from the sources (bench/hermes/script.ts) after a prelude that brings what React Native adds to the engine (bench/hermes/host.ts: whatwg-fetch's `Response`, and small stand-ins for `AbortController`, `URL` and `queueMicrotask`). failwise runs on `systemClock`. Hermes has no JIT: every closure, object and promise a call makes is paid in full, every call. The VM runs a timer's callback without waiting its delay, so the retry path has no 1 ms wait in it here, unlike on Node. Its `setTimeout` and `clearTimeout` are cheap calls into the VM; in React Native 0.88 they are host functions into its C++ `TimerManager`, which on Android schedules each timer in Java through JNI (ReactAndroid's `JavaTimerRegistry`, `JavaTimerManager.createTimer` and `deleteTimer`). cockatiel's timeout arms and clears one host timer per call; failwise's timer queue keeps one host timer for all its requests, armed again when it fires (about once an attempt timeout), not per request. So the VM leaves out a cost that is cockatiel's per call and failwise's only now and then on a phone; it is not measured here. Interleaved rounds (bench/rounds.ts) timed with `Date.now()`, the only clock the bare VM has: " +
      `${rounds} rounds, about ${fmt(results.success.roundMs)} ms per peer per round, after a warm-up; every batch checked as on Node. The ratios are of means. The targets are shown; nothing asserts them.`,
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
    ...(reactNative === undefined ? [] : reactNativeSection(reactNative)),
    HERMES_PROFILE,
    '',
    HERMES_BEFORE,
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
