/**
 * `npm run bench:fleet` (issue 14): N clients (default 1,000) of the real failwise client, each with its own
 * simulated transport, all on one simulated clock, against a simulated primary and backup with scripted faults
 * (bench/fleet/fleet-world.ts), next to two hand-written baselines (bench/fleet/baseline-clients.ts) that meet
 * the very same requests. Deterministic: the same seed gives the same figures.
 *
 *   npm run bench:fleet -- [--clients 1000] [--seed 1] [--rate 0.5] [--write]
 *
 * Prints a table, the back-online phase's table (bench/fleet/back-online.ts) and, last, one JSON line of the
 * fleet's figures. `--write` also writes docs/fleet-load.svg and the
 * fleet section of docs/benchmarks.md.
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
import { backOnlineTable, runBackOnline } from './back-online.js';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '1000' },
    seed: { type: 'string', default: '1' },
    rate: { type: 'string', default: '0.5' },
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

const report = await runFleet({ clients, seed, ratePerSecond }, (line) => process.stderr.write(`${line}\n`));
console.log(fleetTable(report));
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
  const markdown = withFleetSection(readFileSync(doc, 'utf8'), section);
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
console.log(JSON.stringify(fleetSummary(report)));
