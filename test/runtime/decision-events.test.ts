import { describe, expect, expectTypeOf, it } from 'vitest';
import { harness, type Harness } from '../helpers/client-harness.js';
import { fail, respond } from '../helpers/scripted-transport.js';
import { manualConnectivity } from '../../src/connectivity/manual-connectivity.js';
import type {
  DecisionEvent,
  DecisionEventType,
  HealthChangedEvent,
  OutboxChangedEvent,
  OutboxEntryDeadLetteredEvent,
  RetryScheduledEvent,
} from '../../src/index.js';
import { redactEvent } from '../../src/runtime/redact.js';
import type { HealthState } from '../../src/machines.js';

// `DecisionEvent` is a union discriminated by `type` (STYLE "Type each event by its kind"),
// each member with only the fields it has: no `requestId: ''`, `attempt: 0` or `elapsedMs: 0` on the events of
// the origin set and the outbox, no empty `origin` on a request that never chose one.

const twoOrigins = [
  { id: 'primary', url: 'https://api.example.test' },
  { id: 'backup', url: 'https://backup.example.test' },
];
const order = { method: 'POST', path: '/v1/orders?token=t', body: '{}', lifetime: 'durable' } as const;
const REQUEST_FIELDS = ['requestId', 'method', 'path', 'elapsedMs'];

/** Drives the simulated clock at its current time until `promise` settles (outbox work runs on 0 ms timers). */
async function settled<T>(h: Harness, promise: Promise<T>): Promise<T> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 100 && !done; i++) await h.clock.increment(0);
  return promise;
}

describe('DecisionEvent, by type', () => {
  it('is one member per contract type, each with its own fields', () => {
    expectTypeOf<DecisionEventType>().toEqualTypeOf<
      | 'attempt-started'
      | 'attempt-failed'
      | 'retry-scheduled'
      | 'waiting-for-hold'
      | 'succeeded'
      | 'failed'
      | 'deferred'
      | 'health-changed'
      | 'origin-held'
      | 'outbox-changed'
    >();
    expectTypeOf<Extract<DecisionEvent, { type: 'health-changed' }>>().toEqualTypeOf<HealthChangedEvent>();
    expectTypeOf<HealthChangedEvent>().not.toHaveProperty('requestId');
    expectTypeOf<HealthChangedEvent>().not.toHaveProperty('attempt');
    expectTypeOf<HealthChangedEvent>().not.toHaveProperty('elapsedMs');
    expectTypeOf<HealthChangedEvent['from']>().toEqualTypeOf<HealthState>();
    expectTypeOf<OutboxChangedEvent>().not.toHaveProperty('requestId');
    expectTypeOf<OutboxChangedEvent>().not.toHaveProperty('elapsedMs');
    expectTypeOf<RetryScheduledEvent['delayMs']>().toEqualTypeOf<number>();
    expectTypeOf<RetryScheduledEvent['requestId']>().toEqualTypeOf<string>();
    expectTypeOf<Extract<DecisionEvent, { type: 'attempt-started' }>>().not.toHaveProperty('failureClass');
    expectTypeOf<Extract<DecisionEvent, { type: 'failed' }>['reason']>().not.toBeUndefined();
  });

  it('narrows by type, and an outbox event by change', () => {
    const describe = (event: DecisionEvent): string => {
      switch (event.type) {
        case 'retry-scheduled':
          return `${event.requestId} waits ${event.delayMs} ms after ${event.failureClass}`;
        case 'health-changed':
          return `${event.from} -> ${event.to} (${event.criterion})`;
        case 'outbox-changed':
          if (event.change === 'outbox-changed') return `${event.size} stored`;
          if (event.change === 'entry-dead-lettered') {
            expectTypeOf(event).toEqualTypeOf<OutboxEntryDeadLetteredEvent>();
            return `${event.entryId} dead: ${event.reason}`;
          }
          return `${event.entryId} ${event.change}`;
        default:
          return event.type;
      }
    };
    expect(describe({ type: 'health-changed', from: 'healthy', to: 'suspect', criterion: 'tls' })).toBe(
      'healthy -> suspect (tls)',
    );
    expect(describe({ type: 'outbox-changed', change: 'outbox-changed', size: 2 })).toBe('2 stored');
  });
});

describe('decision events as onEvent receives them', () => {
  it('a health change carries its states, criterion and the active origin, and no request field', async () => {
    const h = harness([{ reply: respond(503) }, { reply: respond(200) }], {
      origins: twoOrigins,
      policy: { health: { suspectAfter: 1, failoverAfter: 1 } },
    });
    expect(await h.run({ path: '/v1/items' })).toMatchObject({ status: 'succeeded', origin: 'backup' });
    // Failed over on the 503, then (the clock run to the end) probed and failed back.
    expect(h.events.filter((e) => e.type === 'health-changed')).toEqual([
      {
        type: 'health-changed',
        from: 'healthy',
        to: 'failedOver',
        criterion: 'consecutive-failures',
        origin: 'backup',
        host: 'backup.example.test',
      },
      {
        type: 'health-changed',
        from: 'failedOver',
        to: 'probingFailback',
        criterion: 'min-failed-over-elapsed',
        origin: 'backup',
        host: 'backup.example.test',
      },
      {
        type: 'health-changed',
        from: 'probingFailback',
        to: 'healthy',
        criterion: 'probes-succeeded',
        origin: 'primary',
        host: 'api.example.test',
      },
    ]);
  });

  it('the events of the outbox carry an entry id or a size, and no request field', async () => {
    const connectivity = manualConnectivity('offline');
    const h = harness([{ reply: respond(201) }], { connectivity });
    const outcome = await settled(h, h.client.request(order));
    expect(outcome).toMatchObject({ status: 'deferred', reason: 'offline' });
    const entryId = outcome.status === 'deferred' ? outcome.entryId : '';
    connectivity.set('online');
    await settled(h, h.client.outbox.flush());
    const outboxEvents = h.events.filter((e) => e.type === 'outbox-changed');
    expect(outboxEvents).toEqual([
      { type: 'outbox-changed', change: 'outbox-changed', size: 1 },
      { type: 'outbox-changed', change: 'entry-sent', entryId, attempt: 1 },
      { type: 'outbox-changed', change: 'outbox-changed', size: 0 },
    ]);
    for (const event of outboxEvents)
      for (const field of REQUEST_FIELDS) expect(event).not.toHaveProperty(field);
  });

  it('a request that ended before any attempt has no origin or host', async () => {
    const h = harness([{ reply: respond(201) }], { connectivity: manualConnectivity('offline') });
    expect(await settled(h, h.client.request(order))).toMatchObject({
      status: 'deferred',
      reason: 'offline',
    });
    expect(await h.run({ path: '/v1/items' })).toMatchObject({ status: 'failed', reason: 'offline' });
    expect(h.events.filter((e) => e.type === 'deferred' || e.type === 'failed')).toEqual([
      {
        type: 'deferred',
        requestId: expect.any(String),
        method: 'POST',
        path: '/v1/orders',
        elapsedMs: 0,
        reason: 'offline',
      },
      {
        type: 'failed',
        requestId: 'r1',
        method: 'GET',
        path: '/v1/items',
        elapsedMs: 0,
        attempt: 0,
        reason: 'offline',
      },
    ]);
    for (const event of h.events) expect(Object.values(event)).not.toContain('');
  });

  it('a deferral after a send that failed names its origin and the attempts made', async () => {
    const h = harness([{ reply: fail('connect') }]);
    const sent = h.client.request(order);
    await h.clock.runAll();
    expect(await sent).toMatchObject({ status: 'deferred', reason: 'attempts-exhausted' });
    expect(h.events.filter((e) => e.type === 'deferred')).toEqual([
      {
        type: 'deferred',
        requestId: expect.any(String),
        method: 'POST',
        path: '/v1/orders',
        elapsedMs: expect.any(Number),
        origin: 'primary',
        host: 'api.example.test',
        attempt: 3,
        reason: 'attempts-exhausted',
      },
    ]);
    // No placeholder anywhere: no field of any event is an empty string.
    for (const event of h.events) expect(Object.values(event)).not.toContain('');
    await h.client.close();
  });
});

describe('redactEvent', () => {
  it("cuts a request event's path before its query and fragment, and drops fields left undefined", () => {
    expect(
      redactEvent({
        type: 'attempt-failed',
        requestId: 'r1',
        method: 'GET',
        path: '/v1/a?token=x#f',
        elapsedMs: 5,
        origin: 'primary',
        host: 'api.example.test',
        attempt: 1,
        failureClass: 'connect',
        requestSent: 'no',
        status: undefined,
        retryAfterMs: undefined,
        reason: undefined,
      }),
    ).toEqual({
      type: 'attempt-failed',
      requestId: 'r1',
      method: 'GET',
      path: '/v1/a',
      elapsedMs: 5,
      origin: 'primary',
      host: 'api.example.test',
      attempt: 1,
      failureClass: 'connect',
      requestSent: 'no',
    });
  });

  it('leaves an event without a path as it is, less its undefined fields', () => {
    expect(
      redactEvent({
        type: 'health-changed',
        from: 'failedOver',
        to: 'failedOver',
        criterion: 'probe-failed',
        origin: undefined,
        host: undefined,
      }),
    ).toEqual({ type: 'health-changed', from: 'failedOver', to: 'failedOver', criterion: 'probe-failed' });
    expect(redactEvent({ type: 'outbox-changed', change: 'entry-revived', entryId: 'e1' })).toEqual({
      type: 'outbox-changed',
      change: 'entry-revived',
      entryId: 'e1',
    });
  });
});
