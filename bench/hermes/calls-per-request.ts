/**
 * `npm run bench:calls`: how many JavaScript functions one request runs through, per peer, on the success and
 * retry paths of `npm run bench`. On Hermes, which interprets bytecode, time follows breadth (how much distinct
 * code and data a request touches) more than instructions; this counts it on Node, with no VM and no timing,
 * so it is the same figure on every run.
 *
 *   npm run bench:calls              the table
 *   npm run bench:calls -- --files   and failwise's calls by file
 *
 * Counted by V8's precise coverage (call counts per function) over 1,000 requests after 50 warm-up ones, in
 * this repository's code (the scenario's server in bench/ too: about 5 calls, the same for every peer) and the
 * peer's package; Node's own code and its native promises are not counted, so a
 * peer built on `async` functions runs more on Hermes, where `Promise` is bytecode, than it shows here.
 */
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';

import { createFailoverClient, systemClock } from '../../src/index.js';
import { checkedPeer, commonMakers, failwiseOptions, type Script } from '../scenarios.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REQUESTS = 1_000;
const WARM_UP = 50;
const PEERS = ['failwise', 'cockatiel', 'cockatielNoTimeout', 'handLoop'] as const;
type Peer = (typeof PEERS)[number];

const clients: { close(): Promise<void> }[] = [];
const makers: Record<Peer, (send: () => Promise<Response>) => () => Promise<unknown>> = {
  ...commonMakers,
  failwise: (send) => {
    const client = createFailoverClient(failwiseOptions(send, systemClock));
    clients.push(client);
    return () => client.request({ path: '/x' });
  },
};

/** Where a script is counted: this repository's code, or the peer's own package. */
const countedFile = (url: string, peer: Peer): string | undefined => {
  if (!url.startsWith('file://')) return undefined;
  const file = fileURLToPath(url);
  if (!file.startsWith(ROOT)) return undefined;
  const inRepo = file.slice(ROOT.length);
  if (!inRepo.startsWith('node_modules/')) return inRepo;
  return peer.startsWith('cockatiel') && inRepo.startsWith('node_modules/cockatiel/') ? inRepo : undefined;
};

interface Count {
  peer: Peer;
  script: Script;
  /** Function calls per request. */
  calls: number;
  /** Functions run on at least every other request. */
  functions: number;
  /** Calls per request and functions, by file. */
  byFile: Map<string, { calls: number; functions: number }>;
}

async function count(session: Session, peer: Peer, script: Script): Promise<Count> {
  const run = checkedPeer(peer, script, makers[peer]);
  for (let i = 0; i < WARM_UP; i++) await run.call();
  run.reset?.();
  await session.post('Profiler.takePreciseCoverage'); // counts restart from here
  for (let i = 0; i < REQUESTS; i++) await run.call();
  const { result } = await session.post('Profiler.takePreciseCoverage');
  run.check?.(REQUESTS);
  const byFile = new Map<string, { calls: number; functions: number }>();
  let calls = 0;
  let functions = 0;
  for (const scriptCoverage of result) {
    const file = countedFile(scriptCoverage.url, peer);
    if (file === undefined) continue;
    for (const fn of scriptCoverage.functions) {
      const n = fn.ranges[0]!.count;
      // The first function of a script is the module itself, run once at import.
      if (n === 0 || fn.ranges[0]!.startOffset === 0) continue;
      const entry = byFile.get(file) ?? { calls: 0, functions: 0 };
      entry.calls += n / REQUESTS;
      calls += n / REQUESTS;
      if (n >= REQUESTS / 2) {
        entry.functions++;
        functions++;
      }
      byFile.set(file, entry);
    }
  }
  return { peer, script, calls, functions, byFile };
}

async function main() {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  const counts: Count[] = [];
  for (const script of ['ok', 'flaky'] as const)
    for (const peer of PEERS) counts.push(await count(session, peer, script));
  await session.post('Profiler.stopPreciseCoverage');
  session.disconnect();
  for (const client of clients) await client.close();
  console.log('| path | peer | calls per request | functions run per request |');
  console.log('| --- | --- | ---: | ---: |');
  for (const row of counts)
    console.log(
      `| ${row.script === 'ok' ? 'success' : 'retry'} | ${row.peer} | ${row.calls.toFixed(0)} | ${row.functions} |`,
    );
  if (!process.argv.includes('--files')) return;
  for (const row of counts.filter((candidate) => candidate.peer === 'failwise')) {
    console.log(`\nfailwise, ${row.script === 'ok' ? 'success' : 'retry'} path, by file:`);
    const files = [...row.byFile].sort((a, b) => b[1].calls - a[1].calls);
    for (const [file, { calls, functions }] of files)
      if (calls >= 0.5)
        console.log(
          `${calls.toFixed(0).padStart(5)} calls ${String(functions).padStart(4)} functions  ${file}`,
        );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
