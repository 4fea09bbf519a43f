/**
 * Interleaved rounds: every peer runs one batch per round, in an order that rotates each round, so that
 * drift (CPU frequency, JIT, another peer's garbage collected late) falls on every peer alike. A batch
 * is calls awaited one after another for about `roundMs`; the clock is read once per chunk of calls
 * (sized in the warm-up to about 1 ms), not per call, so reading it costs the cheap peers nothing to
 * speak of. No gc is forced between batches: tried, it made the cheap peers 2 to 4 times slower for
 * the batch after it (a shrunk young generation), which flattered failwise.
 */
import { median, type PeerId, type TimingRow, type TimingSection } from './report.js';

export interface Peer {
  id: PeerId;
  /** One call; resolves when it is done. */
  call: () => Promise<unknown>;
  /** Throws when the calls since `reset` did not do what they must (e.g. not 2 sends per call when retrying). */
  check?: (calls: number) => void;
  /** Resets what `check` counts. */
  reset?: () => void;
}

export interface RoundsOptions {
  rounds: number;
  roundMs: number;
  warmupMs: number;
}

/** Runs `peer` in chunks of `chunk` calls for at least `ms`; returns the calls made and the time taken. */
async function runFor(
  now: () => number,
  peer: Peer,
  ms: number,
  chunk: number,
): Promise<{ calls: number; ms: number }> {
  peer.reset?.();
  let calls = 0;
  const start = now();
  let elapsed: number;
  do {
    for (let i = 0; i < chunk; i++) await peer.call();
    calls += chunk;
    elapsed = now() - start;
  } while (elapsed < ms);
  peer.check?.(calls);
  return { calls, ms: elapsed };
}

/** Runs the peers in interleaved rounds, timed by `now` (ms); each row's figures are per call, in µs. */
export async function interleavedRounds(
  now: () => number,
  peers: Peer[],
  options: RoundsOptions,
): Promise<TimingSection> {
  // Warm-up (JIT, caches), twice, which also sizes each peer's chunk from the rate seen the second time.
  const chunks = new Map<PeerId, number>();
  for (let pass = 0; pass < 2; pass++) {
    for (const peer of peers) {
      const { calls, ms } = await runFor(now, peer, options.warmupMs / 2, chunks.get(peer.id) ?? 1);
      chunks.set(peer.id, Math.max(1, Math.round(calls / ms)));
    }
  }
  const means = new Map<PeerId, number[]>(peers.map((peer) => [peer.id, []]));
  const totals = new Map<PeerId, { ms: number; calls: number }>();
  for (let r = 0; r < options.rounds; r++) {
    for (let i = 0; i < peers.length; i++) {
      const peer = peers[(i + r) % peers.length]!;
      const chunk = chunks.get(peer.id)!;
      const { calls, ms } = await runFor(now, peer, options.roundMs, chunk);
      means.get(peer.id)!.push((ms * 1_000) / calls);
      const total = totals.get(peer.id) ?? { ms: 0, calls: 0 };
      totals.set(peer.id, { ms: total.ms + ms, calls: total.calls + calls });
    }
  }
  const rows: TimingRow[] = peers.map(({ id }) => {
    const perRound = means.get(id)!;
    const total = totals.get(id)!;
    return {
      id,
      meanUs: (total.ms * 1_000) / total.calls,
      medianUs: median(perRound),
      minUs: Math.min(...perRound),
      maxUs: Math.max(...perRound),
      calls: total.calls,
      rounds: perRound.length,
    };
  });
  return { rows, roundMs: options.roundMs };
}
