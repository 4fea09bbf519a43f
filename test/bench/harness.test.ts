// bench/harness.ts's interleaved CPU rounds (section 1's second table), on peers that only record what they are
// asked: how many calls, in which order, and the checks; nothing here is timed.
import { describe, expect, it } from 'vitest';

import { interleavedCpuRounds, type Peer } from '../../bench/harness.js';
import type { PeerId } from '../../bench/report.js';

function recordingPeers(ids: PeerId[]) {
  const calls: PeerId[] = [];
  const checks: [PeerId, number][] = [];
  const resets: PeerId[] = [];
  const peers: Peer[] = ids.map((id) => ({
    id,
    call: async () => void calls.push(id),
    check: (count) => void checks.push([id, count]),
    reset: () => void resets.push(id),
  }));
  return { peers, calls, checks, resets };
}

describe('interleavedCpuRounds', () => {
  it('warms every peer up, then runs each one batch a round, the order rotated each round', async () => {
    const { peers, calls, checks, resets } = recordingPeers(['handLoop', 'cockatiel', 'failwise']);
    const section = await interleavedCpuRounds(peers, { rounds: 3, callsPerRound: 4, warmupCalls: 2 });

    const warmup = calls.slice(0, 6);
    expect(warmup).toEqual(['handLoop', 'handLoop', 'cockatiel', 'cockatiel', 'failwise', 'failwise']);
    // Batches of 4 calls of one peer, in rotated order: round 0 from the first peer, round 1 from the second ...
    const batches: PeerId[] = [];
    for (let i = 6; i < calls.length; i += 4) {
      expect(new Set(calls.slice(i, i + 4)).size).toBe(1);
      batches.push(calls[i]!);
    }
    expect(batches).toEqual([
      ...['handLoop', 'cockatiel', 'failwise'],
      ...['cockatiel', 'failwise', 'handLoop'],
      ...['failwise', 'handLoop', 'cockatiel'],
    ]);
    // Each batch reset before and checked after, with its number of calls.
    expect(resets).toEqual(batches);
    expect(checks).toEqual(batches.map((id) => [id, 4]));

    expect(section.rows.map((row) => row.id)).toEqual(['handLoop', 'cockatiel', 'failwise']);
    for (const row of section.rows) {
      expect(row.calls).toBe(12);
      expect(row.rounds).toBe(3);
      expect(Number.isFinite(row.meanUs) && row.meanUs >= 0).toBe(true);
      expect(row.minUs).toBeLessThanOrEqual(row.medianUs);
      expect(row.medianUs).toBeLessThanOrEqual(row.maxUs);
      expect(row.minUs).toBeLessThanOrEqual(row.meanUs);
      expect(row.meanUs).toBeLessThanOrEqual(row.maxUs);
    }
    expect(section.roundMs).toBeGreaterThanOrEqual(0);
  });

  it("fails when a peer's check finds its batch wrong", async () => {
    const { peers } = recordingPeers(['handLoop', 'failwise']);
    peers[1]!.check = (count) => {
      throw new Error(`bench: failwise made 0 sends for ${count} calls`);
    };
    await expect(
      interleavedCpuRounds(peers, { rounds: 2, callsPerRound: 3, warmupCalls: 1 }),
    ).rejects.toThrow('bench: failwise made 0 sends for 3 calls');
  });
});
