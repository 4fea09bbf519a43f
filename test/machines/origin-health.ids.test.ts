/*
 * Origin ids are the app's strings: `constructor`, `__proto__`, `toString` and the other names on
 * Object.prototype must work as any id does. Run on a real XState actor and through a
 * client (the lean executor), with such ids as backups, where the machine keeps per-origin counts.
 */
import { describe, expect, it } from 'vitest';
import { createActor, fromPromise } from 'xstate';
import { originHealthMachine, healthStateOf } from '../../machines/origin-health/origin-health.machine.js';
import { selectOrigin } from '../../src/policy/select-origin.js';
import type {
  HealthOrigin,
  ProbeInput,
  ProbeOutput,
} from '../../machines/origin-health/origin-health.types.js';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { harness } from '../helpers/client-harness.js';
import { fail, respond } from '../helpers/scripted-transport.js';

const NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];

describe.each(NAMES)('an origin named %s', (name) => {
  it('is taken out of rotation after failoverAfter failures as a backup, and back after minFailedOverMs', async () => {
    const clock = simulatedClock();
    const policy = definePolicy({
      health: { minFailedOverMs: 1000, maxFailedOverMs: 8000, failoverAfter: 3 },
    });
    const origins: HealthOrigin[] = [
      { id: 'primary', accepts: 'all' },
      { id: name, accepts: 'all' },
      { id: 'last', accepts: 'all' },
    ];
    const machine = originHealthMachine.provide({
      actors: { probe: fromPromise<ProbeOutput, ProbeInput>(() => new Promise<never>(() => {})) },
    });
    const actor = createActor(machine, { input: { origins, policy, now: 0 }, clock }).start();
    const choose = () =>
      selectOrigin(actor.getSnapshot().context, healthStateOf(actor.getSnapshot().value), true, clock.now());
    actor.send({ type: 'attempt.failed', origin: 'primary', failureClass: 'tls', at: 0 });
    expect(choose()).toBe(name);
    for (let i = 0; i < 2; i++)
      actor.send({ type: 'attempt.failed', origin: name, failureClass: 'connect', requestSent: 'no', at: 0 });
    expect(actor.getSnapshot().context.backupFailures[name]).toBe(2);
    expect(Object.hasOwn(actor.getSnapshot().context.backupFailures, name)).toBe(true);
    expect(choose()).toBe(name);
    actor.send({ type: 'attempt.failed', origin: name, failureClass: 'connect', requestSent: 'no', at: 0 });
    expect(choose()).toBe('last');
    expect(actor.getSnapshot().context.backupDownUntil[name]).toBe(1000);
    await clock.increment(1000);
    expect(choose()).toBe(name);
    // The context stays plain JSON: what the inspector serialises shows the count under the origin's id.
    expect(JSON.parse(JSON.stringify(actor.getSnapshot().context)).backupDownUntil).toEqual({ [name]: 1000 });
    actor.stop();
  });

  it('serves as a backup through a client, failing over past it when it fails', async () => {
    const h = harness(
      [
        { reply: fail('tls') }, // primary: fails over at once
        { reply: fail('connect') },
        { reply: fail('connect') },
        { reply: respond(200) },
      ],
      {
        origins: [
          { id: 'primary', url: 'https://primary.example.test' },
          { id: name, url: 'https://named.example.test' },
          { id: 'last', url: 'https://last.example.test' },
        ],
        policy: {
          attempts: { max: 4 },
          backoff: { initialMs: 0, maxMs: 0 },
          health: { failoverAfter: 2, suspectAfter: 1 },
        },
      },
    );
    // A PUT goes where the health machine names each time (a read's retry would pass over the origins that
    // failed it), so the named backup meets its two failures in a row and is taken out of rotation.
    const outcome = await h.run({ method: 'PUT', path: '/items', body: '{}' });
    expect(outcome).toMatchObject({ status: 'succeeded', origin: 'last', attempts: 4 });
    // The request's attempts; the probes of the primary come after.
    expect(h.transport.calls.slice(0, 4).map((call) => new URL(call.url).host)).toEqual([
      'primary.example.test',
      'named.example.test',
      'named.example.test',
      'last.example.test',
    ]);
    await h.client.close();
  });
});
