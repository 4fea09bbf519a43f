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

/** A full gc, when node runs with --expose-gc. */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
}

/** Runs `peer` in chunks of `chunk` calls for at least `ms`; returns the calls made and the time taken. */
async function runFor(peer: Peer, ms: number, chunk: number): Promise<{ calls: number; ms: number }> {
  peer.reset?.();
  let calls = 0;
  const start = performance.now();
  let elapsed: number;
  do {
    for (let i = 0; i < chunk; i++) await peer.call();
    calls += chunk;
    elapsed = performance.now() - start;
  } while (elapsed < ms);
  peer.check?.(calls);
  return { calls, ms: elapsed };
}

/** Runs the peers in interleaved rounds; each row's figures are per call, in µs. */
export async function interleavedRounds(peers: Peer[], options: RoundsOptions): Promise<TimingSection> {
  // Warm-up (JIT, caches), twice, which also sizes each peer's chunk from the rate seen the second time.
  const chunks = new Map<PeerId, number>();
  for (let pass = 0; pass < 2; pass++) {
    for (const peer of peers) {
      const { calls, ms } = await runFor(peer, options.warmupMs / 2, chunks.get(peer.id) ?? 1);
      chunks.set(peer.id, Math.max(1, Math.round(calls / ms)));
    }
  }
  const means = new Map<PeerId, number[]>(peers.map((peer) => [peer.id, []]));
  const totals = new Map<PeerId, { ms: number; calls: number }>();
  for (let r = 0; r < options.rounds; r++) {
    for (let i = 0; i < peers.length; i++) {
      const peer = peers[(i + r) % peers.length]!;
      const chunk = chunks.get(peer.id)!;
      const { calls, ms } = await runFor(peer, options.roundMs, chunk);
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

/** How long a server that answers after a wait (bench/peers.ts's `waited`, bench/compare.ts) takes, on a real timer. */
export const WAIT_MS = 2;

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
