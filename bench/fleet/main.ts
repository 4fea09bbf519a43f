/**
 * `npm run bench:fleet`: N clients (default 1,000) of the real failwise client, each with its own
 * simulated transport, all on one simulated clock, against a simulated primary and backup with scripted faults
 * (bench/fleet/fleet-world.ts), next to two hand-written baselines (bench/fleet/baseline-clients.ts) that meet
 * the very same requests. Deterministic: the same seed gives the same figures.
 *
 *   npm run bench:fleet -- [--clients 1000] [--seed 1] [--rate 0.5] [--limit 100] [--write]
 *
 * Then the rate-limited fleet (bench/fleet/rate-limited-run.ts): the same number of clients, and 10 heavy ones,
 * against an origin admitting `--limit` requests a second; then the back-online phase (bench/fleet/back-online.ts):
 * as many phones, each with a durable write queued offline, all back online in one second.
 *
 * Prints the tables and, last, one JSON line of the figures. `--write` also writes docs/fleet-load.svg,
 * docs/fleet-rate-limited.svg and the two fleet sections of docs/benchmarks.md (the back-online section is
 * written by hand from the printed table).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { format, resolveConfig } from 'prettier';
import { fleetSection, withFleetSection } from './fleet-doc.js';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { fleetSvg } from './fleet-svg.js';
import { fleetSummary, fleetTable } from './fleet-report.js';
import { runFleet } from './run-fleet.js';
import {
  LIMITED_END,
  LIMITED_START,
  rateLimitedSection,
  rateLimitedTable,
  withSection,
} from './rate-limited-doc.js';
import { runRateLimitedFleet, type RateLimitedReport } from './rate-limited-run.js';
import { rateLimitedSvg } from './rate-limited-svg.js';
import { backOnlineTable, runBackOnline } from './back-online.js';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '1000' },
    seed: { type: 'string', default: '1' },
    rate: { type: 'string', default: '0.5' },
    limit: { type: 'string', default: '100' },
    write: { type: 'boolean', default: false },
  },
});
const clients = Number(values.clients);
const seed = Number(values.seed);
const ratePerSecond = Number(values.rate);
if (!Number.isInteger(clients) || clients < 1)
  throw new Error(`--clients: expected an integer >= 1, got ${values.clients}`);
if (!Number.isInteger(seed)) throw new Error(`--seed: expected an integer, got ${values.seed}`);
if (!(ratePerSecond > 0)) throw new Error(`--rate: expected a number > 0, got ${values.rate}`);
const limit = Number(values.limit);
if (!Number.isInteger(limit) || limit < 1)
  throw new Error(`--limit: expected an integer >= 1, got ${values.limit}`);

const report = await runFleet({ clients, seed, ratePerSecond }, (line) => process.stderr.write(`${line}\n`));
console.log(fleetTable(report));
const limited: RateLimitedReport[] = [];
for (const fleet of [clients, 10])
  limited.push(
    await runRateLimitedFleet({ clients: fleet, limit, seed }, (line) => process.stderr.write(`${line}\n`)),
  );
for (const run of limited) console.log(`\n${rateLimitedTable(run)}`);
if (values.write) {
  const svg = fileURLToPath(new URL('../../docs/fleet-load.svg', import.meta.url));
  writeFileSync(svg, fleetSvg(report));
  const doc = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));
  const flags = process.argv.slice(2).filter((arg) => arg !== '--write');
  const section = fleetSection(report, {
    command: ['npm run bench:fleet', ...(flags.length ? ['--', ...flags] : [])].join(' '),
    date: `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    node: process.version,
    cores: os.cpus().length,
  });
  const limitedSvg = fileURLToPath(new URL('../../docs/fleet-rate-limited.svg', import.meta.url));
  writeFileSync(limitedSvg, rateLimitedSvg(limited.at(-1)!, 'retry-after'));
  const limitedSection = rateLimitedSection(limited, {
    command: ['npm run bench:fleet', ...(flags.length ? ['--', ...flags] : [])].join(' '),
    date: `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
  });
  const markdown = withSection(
    withFleetSection(readFileSync(doc, 'utf8'), section),
    LIMITED_START,
    LIMITED_END,
    limitedSection,
  );
  const options = (await resolveConfig(doc)) ?? {};
  writeFileSync(doc, await format(markdown, { ...options, filepath: doc }));
  process.stderr.write(`wrote ${svg} and the fleet section of ${doc}\n`);
}
// The same number of phones, all back online in one second, against an origin that serves a tenth of them a second.
const phones = {
  phones: clients,
  seed,
  writesPerPhone: 1,
  capacityPerSecond: Math.max(1, Math.round(clients / 10)),
};
console.log(backOnlineTable(await runBackOnline(phones)));
console.log(
  JSON.stringify({
    ...fleetSummary(report),
    rateLimited: limited.map((run) => ({
      clients: run.options.clients,
      runs: run.runs.map(({ client, variant, goodput, refusedShare, failed, drainMs, longestHoldMs }) => ({
        client,
        variant,
        goodput,
        refusedShare,
        failed,
        drainMs,
        longestHoldMs,
      })),
    })),
  }),
);
