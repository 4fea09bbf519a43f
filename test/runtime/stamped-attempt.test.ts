/**
 * An attempt's transport result reaches the machine with when it came (`at`) and the credentials' generation it
 * was sent with (src/runtime/stamped-attempt.ts): the result object gains the two fields, and a result that cannot
 * (frozen, or one object a transport hands back for every call) works as any other.
 */
import { describe, expect, it } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import type { TransportResult } from '../../src/policy/transport-result.js';

const origins = [{ id: 'primary', url: 'https://api.example.test' }];

async function requestWith(results: () => TransportResult) {
  const clock = simulatedClock();
  const client = createFailoverClient({
    origins,
    clock,
    transport: { name: 'fixed', send: () => Promise.resolve(results()) },
    policy: { backoff: { initialMs: 10, maxMs: 10 } },
  });
  const outcome = client.request({ path: '/items' });
  await clock.runAll();
  const result = await outcome;
  await client.close();
  return result;
}

describe("an attempt's transport result", () => {
  it('may be frozen: a success is still the outcome, with its response', async () => {
    const response = new Response(null, { status: 204 });
    const frozen = Object.freeze({ kind: 'response' as const, response });
    const outcome = await requestWith(() => frozen);
    expect(outcome).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(outcome.status === 'succeeded' && outcome.response).toBe(response);
    expect(Object.keys(frozen)).toEqual(['kind', 'response']);
  });

  it('may be frozen: a failure is retried, then the outcome says why', async () => {
    const frozen = Object.freeze({
      kind: 'error' as const,
      phase: 'connect' as const,
      requestSent: 'no' as const,
      message: 'connection refused',
    });
    const outcome = await requestWith(() => frozen);
    expect(outcome).toMatchObject({
      status: 'failed',
      reason: 'attempts-exhausted',
      attempts: 3,
      failure: { class: 'connect', requestSent: 'no', origin: 'primary', message: 'connection refused' },
    });
  });

  it('may be one object handed back for every attempt: each attempt is judged on its own', async () => {
    const responses = [new Response(null, { status: 503 }), new Response(null, { status: 200 })];
    const shared = { kind: 'response' as const, response: responses[0]! };
    let calls = 0;
    const outcome = await requestWith(() => {
      shared.response = responses[Math.min(calls++, 1)]!;
      return shared;
    });
    expect(outcome).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(outcome.status === 'succeeded' && outcome.response).toBe(responses[1]);
  });
});
