/**
 * A transport that throws (a bug in code on the device: failwise's own fetchTransport, or an app's transport) ends
 * its attempt `unexpected`, and is never held against the origin: failover is for origins that fail.
 */
import { describe, expect, it } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import { fetchTransport } from '../../src/transports/fetch-transport.js';
import type { Transport } from '../../src/transports/transport.js';

const origins = [
  { id: 'primary', url: 'https://api.example.test' },
  { id: 'backup', url: 'https://backup.example.test' },
];
/** Fails over after a single counted failure, and tries each request once. */
const policy = { health: { failoverAfter: 1 }, attempts: { max: 1 } };

async function threeRequests(transport: Transport) {
  const clock = simulatedClock();
  const client = createFailoverClient({ origins, clock, transport, policy });
  const outcomes = [];
  for (let i = 0; i < 3; i++) {
    const outcome = client.request({ path: '/items' });
    await clock.runAll();
    outcomes.push(await outcome);
  }
  const health = client.health();
  await client.close();
  return { outcomes, health };
}

describe('a transport that throws', () => {
  it('ends its attempt unexpected, and the primary stays the active origin', async () => {
    const { outcomes, health } = await threeRequests({
      name: 'throwing',
      send: () => Promise.reject(new TypeError("Cannot read properties of undefined (reading 'get')")),
    });
    for (const outcome of outcomes)
      expect(outcome).toMatchObject({
        status: 'failed',
        failure: {
          class: 'unexpected',
          requestSent: 'unknown',
          origin: 'primary',
          message: 'transport threw TypeError instead of reporting a result',
        },
      });
    expect(health).toMatchObject({ state: 'healthy', activeOrigin: 'primary' });
  });

  it("is what fetchTransport does when failwise's own code fails after the response came, not connection-lost", async () => {
    // A response that failwise's code cannot read (no headers): the fault is on the device, not the network's.
    const broken = { status: 200, statusText: 'OK', body: new Response('x').body, headers: null };
    const { outcomes, health } = await threeRequests(
      fetchTransport({ fetch: () => Promise.resolve(broken as unknown as Response) }),
    );
    expect(outcomes.map((outcome) => outcome.status === 'failed' && outcome.failure?.class)).toEqual([
      'unexpected',
      'unexpected',
      'unexpected',
    ]);
    expect(health).toMatchObject({ state: 'healthy', activeOrigin: 'primary' });
  });

  it('still fails over for a network failure (the control)', async () => {
    const { health } = await threeRequests(
      fetchTransport({ fetch: () => Promise.reject(new TypeError('Failed to fetch')) }),
    );
    expect(health).toMatchObject({ state: 'failedOver', activeOrigin: 'backup' });
  });
});
