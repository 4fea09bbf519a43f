/**
 * Interleaved rounds: every peer runs one batch per round, in an order that rotates each round, so that
 * drift (CPU frequency, JIT, another peer's garbage collected late) falls on every peer alike. A batch
 * is calls awaited one after another for about `roundMs`; the clock is read once per chunk of calls
 * (sized in the warm-up to about 1 ms), not per call, so reading it costs the cheap peers nothing to
 * speak of. No gc is forced between batches: tried, it made the cheap peers 2 to 4 times slower for
 * the batch after it (a shrunk young generation), which flattered failwise.
 */
import { performance } from 'node:perf_hooks';

import { median, type PeerId, type TimingRow, type TimingSection } from './report.js';
import { interleavedRounds as roundsOn, type Peer, type RoundsOptions } from './rounds.js';

export type { Peer, RoundsOptions };

/** A full gc, when node runs with --expose-gc. */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
}

/** Runs the peers in interleaved rounds, on this process's monotonic clock; each row's figures are per call, in µs. */
export function interleavedRounds(peers: Peer[], options: RoundsOptions): Promise<TimingSection> {
  return roundsOn(() => performance.now(), peers, options);
}

export { WAIT_MS } from './scenarios.js';

export interface CpuRoundsOptions {
  rounds: number;
  /** Calls per peer per round, one after another. */
  callsPerRound: number;
  /** Calls per peer before the first round (JIT, caches), not measured. */
  warmupCalls: number;
}

/**
 * Interleaved rounds, as `interleavedRounds`, for calls that wait on real timers: each batch is timed by the
 * process's CPU time (`process.cpuUsage`, user and system), not the wall clock, which the waits would fill. Each
 * row's figures are CPU µs per call; `roundMs` is the wall time of a batch, averaged.
 */
export async function interleavedCpuRounds(peers: Peer[], options: CpuRoundsOptions): Promise<TimingSection> {
  for (const peer of peers) {
    for (let i = 0; i < options.warmupCalls; i++) await peer.call();
  }
  const perRound = new Map<PeerId, number[]>(peers.map((peer) => [peer.id, []]));
  let wallMs = 0;
  for (let r = 0; r < options.rounds; r++) {
    for (let i = 0; i < peers.length; i++) {
      const peer = peers[(i + r) % peers.length]!;
      peer.reset?.();
      const start = performance.now();
      const before = process.cpuUsage();
      for (let call = 0; call < options.callsPerRound; call++) await peer.call();
      const used = process.cpuUsage(before);
      wallMs += performance.now() - start;
      peer.check?.(options.callsPerRound);
      perRound.get(peer.id)!.push((used.user + used.system) / options.callsPerRound);
    }
  }
  const rows: TimingRow[] = peers.map(({ id }) => {
    const values = perRound.get(id)!;
    return {
      id,
      // Every round has as many calls, so the mean of the rounds is the mean of all calls.
      meanUs: values.reduce((sum, v) => sum + v, 0) / values.length,
      medianUs: median(values),
      minUs: Math.min(...values),
      maxUs: Math.max(...values),
      calls: values.length * options.callsPerRound,
      rounds: values.length,
    };
  });
  return { rows, roundMs: wallMs / (options.rounds * peers.length) };
}
