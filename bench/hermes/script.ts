/**
 * The success and retry sections on a Hermes VM: bundled by bench/hermes/run.ts (with `BENCH_ROUNDS`
 * defined) and compiled to bytecode. The same scenarios as `npm run bench` (bench/scenarios.ts) and the same
 * interleaved rounds (bench/rounds.ts), timed by `Date.now()`, the only clock the bare VM has. Prints one line,
 * `HERMES_BENCH <json>`, with each section's rows. Runs after bench/hermes/host.ts, bundled as a script of its own
 * and put first, so that the host's objects exist before any module here is evaluated.
 */
import { createFailoverClient, systemClock } from '../../src/index.js';
import type { PeerId } from '../report.js';
import { interleavedRounds, type RoundsOptions } from '../rounds.js';
import { checkedPeer, commonMakers, failwiseOptions, type Script } from '../scenarios.js';

declare const BENCH_ROUNDS: RoundsOptions;
declare const print: (line: string) => void;

/** The peers on Hermes, in the order of bench/peers.ts (p-retry and OpenTelemetry stay on Node). */
export const HERMES_PEERS = ['handLoop', 'cockatiel', 'cockatielNoTimeout', 'failwise'] as const;

async function section(script: Script) {
  const clients: { close(): Promise<void> }[] = [];
  const makers: Record<
    (typeof HERMES_PEERS)[number],
    (send: () => Promise<Response>) => () => Promise<unknown>
  > = {
    ...commonMakers,
    failwise: (send) => {
      const client = createFailoverClient(failwiseOptions(send, systemClock));
      clients.push(client);
      return () => client.request({ path: '/x' });
    },
  };
  const peers = HERMES_PEERS.map((id: PeerId & keyof typeof makers) => checkedPeer(id, script, makers[id]));
  try {
    return await interleavedRounds(() => Date.now(), peers, BENCH_ROUNDS);
  } finally {
    for (const client of clients) await client.close();
  }
}

async function main() {
  const success = await section('ok');
  const retry = await section('flaky');
  print(`HERMES_BENCH ${JSON.stringify({ success, retry })}`);
}

main().catch((error: unknown) => {
  print(`HERMES_BENCH_ERROR ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
});
