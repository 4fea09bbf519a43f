import { LIMIT_LABELS, LIMIT_VARIANTS, LIMITED_PHASES } from './rate-limited-world.js';
import { LIMITED_CLIENTS, type LimitedFigures, type RateLimitedReport } from './rate-limited-run.js';

/** The rate-limited fleet's section of docs/benchmarks.md lies between these markers. */
export const LIMITED_START =
  '<!-- fleet-rate-limited:start (written by `npm run bench:fleet -- --write`; bench/fleet/rate-limited-doc.ts) -->';
export const LIMITED_END = '<!-- fleet-rate-limited:end -->';

/** `doc` with the section between `start` and `end` replaced by `section` (or `section` at its end). */
export function withSection(doc: string, start: string, end: string, section: string): string {
  const from = doc.indexOf(start);
  const to = doc.indexOf(end);
  if (from < 0 || to < from) return `${doc.trimEnd()}\n\n${section}\n`;
  return doc.slice(0, from) + section + doc.slice(to + end.length);
}

/** `fresh` (a newly rendered docs/benchmarks.md) with the section between `start` and `end` that `old` had, if any. */
export function keepSection(fresh: string, old: string, start: string, end: string): string {
  const from = old.indexOf(start);
  const to = old.indexOf(end);
  return from < 0 || to < from ? fresh : withSection(fresh, start, end, old.slice(from, to + end.length));
}

/**
 * The back-online phase's section (bench/fleet/back-online.ts), written by hand from the table `npm run bench:fleet`
 * prints; kept as it is by every `--write`.
 */
export const BACK_ONLINE_START =
  '<!-- back-online:start (written by hand from `npm run bench:fleet`; bench/fleet/back-online.ts) -->';
export const BACK_ONLINE_END = '<!-- back-online:end -->';

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const CLIENT_LABELS: Record<string, string> = {
  failwise: 'failwise (default policy)',
  naive: 'naive: 3 immediate retries',
  'aws-standard': 'AWS standard retry mode',
};

/** One table per run: a row per variant and client. */
function table(report: RateLimitedReport): string[] {
  const lines = [
    '| answers | client | goodput / limit | 429s after 1 s | failed | time to drain | longest hold |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const variant of LIMIT_VARIANTS)
    for (const client of LIMITED_CLIENTS) {
      const f = report.runs.find((r) => r.variant === variant && r.client === client)!;
      lines.push(
        `| ${LIMIT_LABELS[variant]} | ${CLIENT_LABELS[client]} | ${f.goodput.toFixed(2)} | ${pct(f.refusedShare)} | ${failed(f)} | ${sec(f.drainMs)} | ${f.longestHoldMs === undefined ? '-' : sec(f.longestHoldMs)} |`,
      );
    }
  return lines;
}

function failed(f: LimitedFigures): string {
  const share = `${f.failed.toLocaleString('en-US')} of ${f.requests.toLocaleString('en-US')}`;
  if (f.failedBy === undefined) return share;
  const reasons = Object.entries(f.failedBy)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, n]) => `${reason} ${n.toLocaleString('en-US')}`)
    .join(', ');
  return `${share} (${reasons})`;
}

/** The console table of one run. */
export function rateLimitedTable(report: RateLimitedReport): string {
  const { clients, limit } = report.options;
  return [`rate-limited fleet: ${clients} clients, ${limit} requests/s admitted`, ...table(report)].join(
    '\n',
  );
}

interface Meta {
  command: string;
  date: string;
}

/** The section: how it was run, each run's table, what the targets say, and the plot. */
export function rateLimitedSection(reports: readonly RateLimitedReport[], meta: Meta): string {
  const [overload, after] = LIMITED_PHASES;
  const limit = reports[0]!.options.limit;
  const runs = reports.flatMap((report) => [
    '',
    `**${report.options.clients.toLocaleString('en-US')} clients** (${((overload.load * limit) / report.options.clients).toFixed(2)} requests a second each during the overload), seed ${report.options.seed}, ${sec(report.realMs)} of real time:`,
    '',
    ...table(report),
  ]);
  return [
    LIMITED_START,
    '',
    '## 8. A fleet against a rate limit',
    '',
    `Measured with \`${meta.command}\` on ${meta.date}. One origin admits ${limit} requests a second (a token bucket holding one second's worth, bench/fleet/rate-limited-world.ts) and answers 429 past it: with nothing more, with \`Retry-After\` (the seconds until it has a token again, at least 1), or with \`RateLimit: "default";r=…;t=…\` on every answer (\`r\` the whole tokens left, \`t\` 1 s, or the seconds until a token when none is left). The clients ask ${overload.load} times what it admits for ${overload.to / 1000} s, then ${after.load} times until ${after.to / 1000} s, so a backlog builds and drains; every request is a GET with failwise's default budget (10 s). The clients: failwise with its default policy (throttle on), a naive client (3 immediate retries), and AWS SDKs' standard retry mode written out in bench/fleet/rate-limited-run.ts (3 attempts, full jitter over 2^n x 500 ms after a 429, a retry quota of 500 tokens; it reads no Retry-After). Goodput: 2xx answers a second from 1 s to the end of the overload, over the limit. 429s: the share of all answers from 1 s on. Time to drain: from the end of the overload until every request begun in it ended. Longest hold: the longest a failwise request waited for a hold or a send slot.`,
    ...runs,
    '',
    'Targets (nothing asserts them): goodput >= 0.9 x the limit, 429s <= 10 % after the first second, no request failed that could have waited within its budget, no hold longer than `retryAfter.maxHoldMs` (5 min).',
    '',
    ...reading(reports),
    '',
    '![429s per second at the rate-limited origin, per client](fleet-rate-limited.svg)',
    '',
    LIMITED_END,
  ].join('\n');
}

/** What the figures say about the targets, read from them. */
function reading(reports: readonly RateLimitedReport[]): string[] {
  const lines: string[] = [];
  for (const report of reports) {
    const failwise = report.runs.filter((r) => r.client === 'failwise');
    const met = failwise.filter((r) => r.refusedShare <= 0.1).map((r) => LIMIT_LABELS[r.variant]);
    const goodput = failwise.filter((r) => r.goodput >= 0.9).map((r) => LIMIT_LABELS[r.variant]);
    const holds = Math.max(...failwise.map((r) => r.longestHoldMs ?? 0));
    lines.push(
      `- ${report.options.clients.toLocaleString('en-US')} clients: 429s <= 10 % ${met.length ? `met with ${met.join(', ')}` : 'met with none of the three'}; goodput >= 0.9 ${goodput.length ? `met with ${goodput.join(', ')}` : 'met with none'}; the longest hold ${sec(holds)}, within \`maxHoldMs\`.`,
    );
  }
  const heavy = reports.at(-1)!;
  const bare = heavy.runs.find((r) => r.client === 'failwise' && r.variant === 'bare')!;
  const naive = heavy.runs.find((r) => r.client === 'naive' && r.variant === 'bare')!;
  lines.push(
    '',
    `With 429 alone, ${heavy.options.clients} clients: failwise's send rate drops by 30 % once per congestion event (the 429s within half a second of a decrease count once, as CUBIC decreases once per window) and climbs back along a cubic curve: goodput ${bare.goodput.toFixed(2)}, ${pct(bare.refusedShare)} answered 429, ${bare.failed.toLocaleString('en-US')} failed, against the naive client, whose flood of retries keeps the origin saturated and fails ${naive.failed.toLocaleString('en-US')} (the overload's excess) while ${pct(naive.refusedShare)} of what it sends is refused. Taking every 429 as a decrease of its own, and starting the bucket full, left this at goodput 0.74 and 2,803 failed: the 429s of attempts already on their way cut the rate again and again. The quiet period after each throttle (a few hundred milliseconds for these clients) and the release of the requests it held spread over \`releaseSpreadMs\` end more of them \`throttled\` than the send rate alone does (1,575 failed at seed 1 with \`quietIntervals: 0\`), and keep 429s under 10 % over seeds 1 to 3 (8.8, 5.9 and 8.6 %; 7.9, 8.0 and 13.2 % without it).`,
  );
  lines.push(
    '',
    "Why the fleet of many light clients meets more 429s than the few heavy ones, and what keeps it from meeting about half: the limit is the origin's, shared by every client, while each client's send rate, quiet period, hold and quota are its own (never global, by design: a client knows only what it sent and was told). A client that asks once every few seconds is under its own send rate already (the rate never drops below `minRatePerSecond`, 0.5 a second, and the bucket holds a token), so the rate alone leaves such a fleet at twice the limit refused about half the time. What slows it is the quiet period after a throttle ([policy](policy.md#quiet-period)): 4 times the client's own smoothed interval between requests, at most 30 s, so a light client that meets a 429 sends nothing more to the origin for 20 to 30 s; its next requests, and the retry of a bare 429, end `throttled` without being sent, and the 429s fall to the figures above (18.7 % to 19.2 % with a 429 alone, 22.8 % to 22.9 % with Retry-After, 13.2 % to 13.7 % with RateLimit fields, over seeds 1 to 3; a 2xx whose field says `r=0` starts the quiet period too). Two things keep it above what a client could reach, each for the single client's sake: one throttle to a client that has no pace yet (its first request, or its first burst) starts no quiet period, so that 429 is retried by rules 4 and 5 as before, and only a second throttle running starts one; and the request a Retry-After answered comes back when the server said, held by a quiet period only once the origin has throttled twice running. A quiet period from any client's first throttle, the request told when held too, gave 13.5 %, 13.5 % and 7.6 % at seed 1, but a lone request's retry of a 429 then ended `throttled`, even after a `Retry-After: 2`. No client-side rule brings this fleet clearly under 10 % with the 429 alone: a client that has met no 429 yet knows nothing of the overload (a bare 429 or `Retry-After: 1` tells only the client that got it) and must send at once, as it would to an origin that is well; each 429 takes at most one client's 0.2 requests a second off the origin, so the excess decays with a time constant of 5 s and about 480 answers are 429 before the clients never refused fit the limit. `npx tsx bench/fleet/light-fleet-floor.ts` measures that floor with an oracle that sends nothing from its first 429 until it is told the overload is over: 11.0 % of answers after the first second (seed 1), and 9.9 % if it then sends the requests it held exactly at the spare rate (9.7 % to 11.0 % over seeds 1 to 5). The same oracle made to keep a lone request's retry (it retries the 429 of a client's first request once, 200 ms later or after the 1 s this origin's Retry-After names, and falls silent only if that is refused too) meets 16.9 % to 17.0 % (17.3 % to 18.1 % with Retry-After) over seeds 1 to 3: the floor for any rule that keeps rules 4 and 5 for a lone request. failwise stays above that for the request told when, and because a quiet period sized by the client's own pace can end before the overload does, which the oracle is told. A few heavy clients (a service calling a third-party API) are what the send rate is for: there it keeps 429s low, and their quiet periods last a few hundred milliseconds. Requests fail in every configuration because twice the limit for 20 s builds a backlog that takes longer than the 10 s budget to drain: failwise ends such requests `throttled` at once, without sending them, when their send slot or the end of the quiet period is past their budget (or after their attempts, `attempts-exhausted`, when they met 429s); a durable request would wait instead.",
  );
  return lines;
}
