import { describe, expect, it, vi } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import type { Transport } from '../../src/transports/transport.js';
import { withInspector } from '../../src/runtime/with-inspector.js';

/** A simulated clock that records every timer armed on it. */
function recordingClock() {
  const clock = simulatedClock();
  const armed: number[] = [];
  return {
    armed,
    clock: {
      ...clock,
      setTimeout: (fn: () => void, ms: number) => (armed.push(ms), clock.setTimeout(fn, ms)),
    },
    sim: clock,
  };
}

/** Answers each attempt at once with the next status of the script. */
function answering(...statuses: number[]): Transport {
  let call = 0;
  return {
    name: 'answering',
    send: () =>
      Promise.resolve({
        kind: 'response' as const,
        response: new Response(null, { status: statuses[Math.min(call++, statuses.length - 1)]! }),
      }),
  };
}

describe('timers of the lean executor', () => {
  it('a success arms only the budget and the attempt timeout, and leaves none behind', async () => {
    const { clock, armed, sim } = recordingClock();
    const client = createFailoverClient({
      origins: [{ id: 'primary', url: 'https://api.example.test' }],
      clock,
      transport: answering(204),
    });
    expect(await client.request({ path: '/x' })).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(armed).toEqual([10_000, 5_000]);
    expect(sim.pending()).toBe(0);
    await client.close();
  });

  it('a 0 ms backoff runs without a timer', async () => {
    const { clock, armed, sim } = recordingClock();
    const client = createFailoverClient({
      origins: [{ id: 'primary', url: 'https://api.example.test' }],
      clock,
      transport: answering(503, 503, 204),
      policy: { backoff: { initialMs: 0, maxMs: 0 } },
    });
    expect(await client.request({ path: '/x' })).toMatchObject({ status: 'succeeded', attempts: 3 });
    // The budget once, and each attempt's timeout (clipped to the budget left): no timer for either wait.
    expect(armed).toEqual([10_000, 5_000, 5_000, 5_000]);
    expect(armed).not.toContain(0);
    expect(sim.pending()).toBe(0);
    await client.close();
  });

  it('(the same client on XState actors does arm a 0 ms timer per wait: what the lean executor saves)', async () => {
    const { clock, armed } = recordingClock();
    const client = createFailoverClient({
      origins: [{ id: 'primary', url: 'https://api.example.test' }],
      clock,
      transport: answering(503, 204),
      policy: { backoff: { initialMs: 0, maxMs: 0 } },
      inspect: withInspector(() => undefined),
    });
    const outcome = client.request({ path: '/x' });
    await (clock as unknown as { increment(ms: number): Promise<void> }).increment(0);
    expect(await outcome).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(armed).toContain(0);
    await client.close();
  });
});

describe('timers of the lean executor on systemClock (one host timer for every delay: src/engine/timer-queue.ts)', () => {
  it('100 successful requests one after another arm the host timer twice in all, not twice each', async () => {
    const hostTimers = vi.spyOn(globalThis, 'setTimeout');
    const client = createFailoverClient({
      origins: [{ id: 'primary', url: 'https://api.example.test' }],
      transport: answering(204),
    });
    try {
      for (let i = 0; i < 100; i++)
        expect(await client.request({ path: '/x' })).toMatchObject({ status: 'succeeded', attempts: 1 });
      // The first request's budget (10 s), then its earlier attempt timeout (5 s); every later request's timers
      // fall due after the one the host timer waits for.
      expect(hostTimers.mock.calls.map(([, ms]) => ms)).toEqual([10_000, 5_000]);
    } finally {
      hostTimers.mockRestore();
      await client.close();
    }
  });
  it('on a host whose timers cannot be unref()ed (React Native, browsers), 100 requests arm it twice and close() clears it', async () => {
    const sim = simulatedClock();
    const counts = { armed: 0, cleared: 0 };
    // A clock like systemClock on such a host: a monotonic time line, timer handles without unref.
    const clock = {
      now: () => sim.now(),
      monotonicNow: () => sim.now(),
      setTimeout: (fn: () => void, ms: number) => (counts.armed++, sim.setTimeout(fn, ms)),
      clearTimeout: (handle: unknown) => (counts.cleared++, sim.clearTimeout(handle)),
    };
    const client = createFailoverClient({
      origins: [{ id: 'primary', url: 'https://api.example.test' }],
      clock,
      transport: answering(204),
    });
    for (let i = 0; i < 100; i++)
      expect(await client.request({ path: '/x' })).toMatchObject({ status: 'succeeded', attempts: 1 });
    // The first budget, then the first attempt's earlier timeout; kept armed between requests.
    expect(counts).toEqual({ armed: 2, cleared: 1 });
    expect(sim.pending()).toBe(1);
    await client.close();
    expect(sim.pending()).toBe(0);
  });
});
