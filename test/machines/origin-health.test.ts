import { describe, expect, it } from 'vitest';
import { createActor, fromPromise } from 'xstate';
import { originHealthMachine, healthStateOf } from '../../machines/origin-health/origin-health.machine.js';
import { selectOrigin } from '../../src/policy/select-origin.js';
import type {
  HealthChanged,
  HealthOrigin,
  ProbeInput,
  ProbeOutput,
} from '../../machines/origin-health/origin-health.types.js';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import type { FailureClass } from '../../src/policy/failure.js';
import type { PolicyInput } from '../../src/policy/policy.js';

const twoOrigins: HealthOrigin[] = [
  { id: 'primary', accepts: 'all' },
  { id: 'backup', accepts: 'all' },
];

/**
 * Runs the machine alone on a simulated clock. Probes answer from `probeResults` in order (then succeed);
 * `'hang'` never answers, so the machine's probe timeout decides.
 */
function start(
  options: {
    origins?: HealthOrigin[];
    health?: PolicyInput['health'];
    probeResults?: (Omit<ProbeOutput, 'at'> | 'hang')[];
    seed?: number;
  } = {},
) {
  const clock = simulatedClock();
  const policy = definePolicy({
    health: {
      minFailedOverMs: 1000,
      maxFailedOverMs: 8000,
      probeIntervalMs: 100,
      probeTimeoutMs: 50,
      ...options.health,
    },
  });
  const probeResults = [...(options.probeResults ?? [])];
  const probes: number[] = [];
  const machine = originHealthMachine.provide({
    actors: {
      probe: fromPromise<ProbeOutput, ProbeInput>(() => {
        probes.push(clock.now());
        const next = probeResults.shift() ?? { ok: true };
        return next === 'hang' ? new Promise<never>(() => {}) : Promise.resolve({ ...next, at: clock.now() });
      }),
    },
  });
  const actor = createActor(machine, {
    input: { origins: options.origins ?? twoOrigins, policy, now: clock.now(), seed: options.seed },
    clock,
  });
  const changes: HealthChanged[] = [];
  actor.on('health-changed', (change) => changes.push(change));
  actor.start();
  const state = () => healthStateOf(actor.getSnapshot().value);
  const fail = (failureClass: FailureClass = 'connect', origin = 'primary', status?: number) =>
    actor.send({ type: 'attempt.failed', origin, failureClass, status, at: clock.now() });
  const succeed = (origin = 'primary') =>
    actor.send({ type: 'attempt.succeeded', origin, latencyMs: 5, at: clock.now() });
  const choose = (write = false) => selectOrigin(actor.getSnapshot().context, state(), write, clock.now());
  return { actor, clock, state, fail, succeed, choose, changes, probes };
}

describe('originHealthMachine', () => {
  it('becomes suspect after suspectAfter failures and fails over after failoverAfter, traffic staying on the primary until then', () => {
    const { state, fail, choose, changes } = start();
    fail();
    expect(state()).toBe('healthy');
    fail();
    expect(state()).toBe('suspect');
    expect(choose()).toBe('primary');
    fail();
    fail();
    expect(state()).toBe('suspect');
    fail();
    expect(state()).toBe('failedOver');
    expect(choose()).toBe('backup');
    expect(changes.map(({ from, to, criterion }) => [from, to, criterion])).toEqual([
      ['healthy', 'suspect', 'consecutive-failures'],
      ['suspect', 'failedOver', 'consecutive-failures'],
    ]);
  });

  it('returns from suspect to healthy on recoverAfter successes: less evidence than leaving healthy took', () => {
    const { state, fail, succeed, changes } = start();
    fail();
    fail();
    succeed();
    expect(state()).toBe('healthy');
    expect(changes.at(-1)).toMatchObject({ from: 'suspect', to: 'healthy', criterion: 'successes' });
  });

  it('fails over at once on a TLS failure', () => {
    const { state, fail, changes } = start();
    fail('tls');
    expect(state()).toBe('failedOver');
    expect(changes).toEqual([
      expect.objectContaining({ from: 'healthy', to: 'failedOver', criterion: 'tls' }),
    ]);
  });

  it('ignores failures that say nothing about the origin', () => {
    const { actor, state, fail } = start();
    for (const failureClass of [
      'rate-limited',
      'client-error',
      'unauthorized',
      'cancelled',
      'offline',
    ] as const)
      for (let i = 0; i < 10; i++)
        fail(failureClass, 'primary', failureClass === 'rate-limited' ? 429 : undefined);
    expect(state()).toBe('healthy');
    expect(actor.getSnapshot().context.evidence.consecutiveFailures).toBe(0);
  });

  it('counts nothing while connectivity says offline, and going online marks nothing healthy (rule 6)', () => {
    const { actor, clock, state, fail } = start();
    actor.send({ type: 'connectivity.changed', online: false, at: clock.now() });
    for (let i = 0; i < 10; i++) fail('connect');
    expect(state()).toBe('healthy');
    actor.send({ type: 'connectivity.changed', online: true, at: clock.now() });
    for (let i = 0; i < 5; i++) fail('connect');
    expect(state()).toBe('failedOver');
    actor.send({ type: 'connectivity.changed', online: true, at: clock.now() });
    expect(state()).toBe('failedOver');
  });

  it('with one origin never fails over: there is nowhere to go', () => {
    const { state, fail } = start({ origins: [{ id: 'primary', accepts: 'all' }] });
    for (let i = 0; i < 20; i++) fail('tls');
    expect(state()).toBe('suspect');
  });

  it('probes only after minFailedOverMs, and fails back after probeSuccesses probes in a row', async () => {
    const { clock, state, fail, choose, probes, changes } = start();
    fail('tls');
    await clock.increment(999);
    expect(probes).toEqual([]);
    expect(state()).toBe('failedOver');
    await clock.increment(1);
    expect(state()).toBe('probingFailback');
    expect(choose()).toBe('backup');
    await clock.increment(200);
    expect(probes).toEqual([1000, 1100, 1200]);
    expect(state()).toBe('healthy');
    expect(choose()).toBe('primary');
    expect(changes.slice(1).map(({ from, to, criterion, at }) => [from, to, criterion, at])).toEqual([
      ['failedOver', 'probingFailback', 'min-failed-over-elapsed', 1000],
      ['probingFailback', 'healthy', 'probes-succeeded', 1200],
    ]);
    expect(clock.pending()).toBe(0);
  });

  it('a failed probe sends it back to failedOver for reprobeAfterMs, doubled by each failed probe in a row, capped at maxFailedOverMs', async () => {
    const { clock, state, fail, probes, changes } = start({
      health: { reprobeAfterMs: 2000, reprobeJitter: 'none' },
      probeResults: [{ ok: false }, { ok: true }, { ok: false }, 'hang', { ok: false }, { ok: false }],
    });
    fail('tls');
    await clock.increment(1000); // probe at 1000 fails: wait 2000
    await clock.increment(2000); // probe at 3000 ok, 3100 fails: wait 4000
    await clock.increment(100);
    expect(state()).toBe('failedOver');
    await clock.increment(4000); // probe at 7100 hangs: times out at 7150, wait 8000
    await clock.increment(50);
    expect(state()).toBe('failedOver');
    await clock.increment(8000); // probe at 15150 fails: 16000, capped at 8000
    await clock.increment(8000); // probe at 23150 fails: still 8000
    await clock.increment(8000); // probe at 31150 ok, then 31250 and 31350: failed back
    await clock.increment(200);
    expect(probes).toEqual([1000, 3000, 3100, 7100, 15_150, 23_150, 31_150, 31_250, 31_350]);
    expect(state()).toBe('healthy');
    expect(changes.filter((c) => c.criterion === 'probe-failed')).toHaveLength(5);
  });

  it('spreads the wait after a failed probe by its jitter, drawn from the seed: equal jitter waits half of it and more', async () => {
    /** The waits after five failed probes in a row, for one seed. */
    const waits = async (seed: number, jitter: 'equal' | 'full') => {
      const { clock, fail, probes } = start({
        seed,
        health: { reprobeAfterMs: 1000, reprobeJitter: jitter, maxFailedOverMs: 8000 },
        probeResults: Array.from({ length: 6 }, () => ({ ok: false })),
      });
      fail('tls');
      for (let i = 0; i < 40; i++) await clock.increment(1000);
      return probes.slice(1, 6).map((at, k) => at - probes[k]!);
    };
    const bases = [1000, 2000, 4000, 8000, 8000];
    const seeds = [1, 2, 3, 4, 5, 6, 7, 8];
    const equal = await Promise.all(seeds.map((seed) => waits(seed, 'equal')));
    for (const run of equal)
      run.forEach((wait, k) => {
        expect(wait).toBeGreaterThanOrEqual(bases[k]! / 2);
        expect(wait).toBeLessThanOrEqual(bases[k]!);
      });
    const full = await Promise.all(seeds.map((seed) => waits(seed, 'full')));
    for (const run of full) run.forEach((wait, k) => expect(wait).toBeLessThanOrEqual(bases[k]!));
    // The same seed waits the same; different seeds spread apart.
    expect(await waits(3, 'equal')).toEqual(equal[2]);
    expect(new Set(equal.map((run) => run[0])).size).toBeGreaterThan(4);
    expect(new Set(full.map((run) => run[0])).size).toBeGreaterThan(4);
  });

  it('within failbackDwellMs of a failback, a share of failures keeps traffic on the primary; after it, they fail over', async () => {
    const { clock, state, fail, succeed, changes } = start({
      health: { failbackDwellMs: 3000, failoverAfter: 3, dwellFailoverAfter: 6, minRequests: 4 },
    });
    fail('tls');
    await clock.increment(1200); // failed back at 1200
    expect(state()).toBe('healthy');
    // Half the primary's answers fail, two in a row at most: the ratio (0.5 of >= 4) would fail over.
    for (let i = 0; i < 10; i++) {
      fail();
      fail();
      succeed();
      await clock.increment(250);
    }
    expect(clock.now()).toBe(3700); // 2500 ms after the failback
    expect(['healthy', 'suspect']).toContain(state());
    await clock.increment(500); // the dwell is over at 4200
    fail();
    expect(state()).toBe('failedOver');
    expect(changes.at(-1)).toMatchObject({ to: 'failedOver', criterion: 'failure-ratio', at: 4200 });
  });

  it('within failbackDwellMs of a failback, a primary that is down again is left after dwellFailoverAfter failures in a row', async () => {
    const { clock, state, fail, choose, changes } = start({
      health: { failbackDwellMs: 30_000, failoverAfter: 3, dwellFailoverAfter: 6 },
    });
    fail('tls');
    await clock.increment(1200); // failed back at 1200
    for (let i = 0; i < 5; i++) fail('connect');
    expect(state()).toBe('suspect');
    expect(choose()).toBe('primary');
    fail('connect');
    expect(state()).toBe('failedOver');
    expect(choose()).toBe('backup');
    expect(changes.at(-1)).toMatchObject({ to: 'failedOver', criterion: 'consecutive-failures', at: 1200 });
  });

  it('within failbackDwellMs of a failback, a TLS failure still fails over at once', async () => {
    const { clock, state, fail } = start({ health: { failbackDwellMs: 30_000 } });
    fail('tls');
    await clock.increment(1200);
    expect(state()).toBe('healthy');
    fail('tls');
    expect(state()).toBe('failedOver');
  });

  it('a probe from an offline device is neither success nor failure', async () => {
    const { clock, state, fail, probes } = start({
      probeResults: [{ ok: true }, { ok: false, failureClass: 'offline' }, { ok: true }, { ok: true }],
    });
    fail('tls');
    await clock.increment(1000 + 300);
    expect(probes).toEqual([1000, 1100, 1200, 1300]);
    expect(state()).toBe('healthy');
  });

  it('fails over for longer when the primary fails again soon after a failback, and for the minimum after it stayed up', async () => {
    const { actor, clock, state, fail } = start();
    fail('tls');
    await clock.increment(1200); // failed back at 1200
    expect(state()).toBe('healthy');
    fail('tls');
    expect(actor.getSnapshot().context.failedOverMs).toBe(2000);
    await clock.increment(2200); // failed back at 3400
    await clock.increment(8000); // stayed up for maxFailedOverMs
    fail('tls');
    expect(actor.getSnapshot().context.failedOverMs).toBe(1000);
  });

  it('takes a failing backup out of rotation, and has no origin when none is usable', () => {
    const { state, fail, choose } = start({
      origins: [
        { id: 'primary', accepts: 'all' },
        { id: 'replica', accepts: 'reads' },
        { id: 'backup', accepts: 'all' },
      ],
    });
    fail('tls');
    expect(state()).toBe('failedOver');
    expect(choose(false)).toBe('replica');
    expect(choose(true)).toBe('backup');
    for (let i = 0; i < 5; i++) fail('connect', 'backup');
    expect(choose(true)).toBeUndefined();
    expect(choose(false)).toBe('replica');
  });

  it('leaves no timer behind when stopped', async () => {
    const { actor, clock, fail } = start({ probeResults: ['hang'] });
    fail('tls');
    await clock.increment(1000);
    expect(clock.pending()).toBeGreaterThan(0);
    actor.stop();
    expect(clock.pending()).toBe(0);
  });
});
