import { describe, expect, it } from 'vitest';
import { createActor, fromPromise } from 'xstate';
import { originHealthMachine, healthStateOf } from '../../machines/origin-health/origin-health.machine.js';
import { selectOrigin } from '../../machines/origin-health/select-origin.js';
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
    input: { origins: options.origins ?? twoOrigins, policy, now: clock.now() },
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

  it('a failed probe sends it back to failedOver for twice as long, capped at maxFailedOverMs', async () => {
    const { clock, state, fail, probes } = start({
      probeResults: [{ ok: false }, { ok: true }, { ok: false }, 'hang', { ok: false }],
    });
    fail('tls');
    await clock.increment(1000); // probe at 1000 fails: wait 2000
    await clock.increment(2000); // probe at 3000 ok, 3100 fails: wait 4000
    await clock.increment(100);
    expect(state()).toBe('failedOver');
    await clock.increment(4000); // probe at 7100 hangs: times out at 7150, wait 8000 (capped)
    await clock.increment(50);
    expect(state()).toBe('failedOver');
    await clock.increment(8000); // probe at 15150 fails: the wait stays at the cap
    await clock.increment(8000);
    expect(probes).toEqual([1000, 3000, 3100, 7100, 15_150, 23_150]);
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
