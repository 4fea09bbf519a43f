import { describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import { withInspector } from '../../src/runtime/with-inspector.js';
import { memoryStore } from '../../src/stores/memory-store.js';
import type { OutboxEntry, OutboxStore } from '../../src/stores/outbox-store.js';
import type { Transport, TransportRequest, TransportResult } from '../../src/transports/transport.js';

// rule 9 for the inspector: an `inspect` observer sees every actor, every snapshot
// (context, children, output), every event and every action with its params. A client full of secrets (a
// query, a header value, a body, an idempotency key, an auth token, an entry a previous process stored, and
// errors whose messages or fields quote them) runs interactive and durable requests under an observer that
// collects it all, and no record, serialised deeply, holds a secret: the machines hold ids and summaries.

const SECRETS = {
  token: 'tok-SECRET-AUTH',
  query: 'SECRET-QUERY',
  header: 'SECRET-HEADER',
  body: 'SECRET-BODY',
  key: 'SECRET-KEY',
  storedQuery: 'SECRET-STORED-QUERY',
  storedHeader: 'SECRET-STORED-HEADER',
  storedBody: 'SECRET-STORED-BODY',
  storedKey: 'SECRET-STORED-KEY',
  refresh: 'SECRET-REFRESH-ERROR',
  store: 'SECRET-STORE-ERROR',
  crash: 'SECRET-TRANSPORT-ERROR',
};

interface ActorRefLike {
  id: string;
  getSnapshot(): unknown;
  options?: { input?: unknown };
}
const isActorRef = (value: unknown): value is ActorRefLike =>
  typeof value === 'object' && value !== null && typeof (value as ActorRefLike).getSnapshot === 'function';

/** An actor's snapshot; none while it is starting (XState refuses to read it then). */
function snapshotOf(actor: ActorRefLike): unknown {
  try {
    return actor.getSnapshot();
  } catch {
    return undefined;
  }
}

/**
 * JSON of one inspection event, walking into every object once: actor refs (which write themselves as an id) as
 * their snapshot and input, so every child's context, input and output is written too, and errors with their
 * message, cause and fields.
 */
function serialise(event: InspectionEvent): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(event, function (this: Record<string, unknown>, key: string, replaced: unknown) {
    // The value before its toJSON ran.
    const value = key === '' ? replaced : this[key];
    if (typeof value !== 'object' || value === null) return replaced;
    if (seen.has(value)) return '[seen]';
    seen.add(value);
    if (isActorRef(value)) return { id: value.id, snapshot: snapshotOf(value), input: value.options?.input };
    if (value instanceof Map) return Object.fromEntries(value as Map<string, unknown>);
    if (value instanceof Set) return [...(value as Set<unknown>)];
    // An error's message, cause and fields are not enumerable, or not all: write them out.
    if (value instanceof Error)
      return { ...value, name: value.name, message: value.message, cause: value.cause, stack: value.stack };
    return value;
  });
}

const respond = (status: number, headers: Record<string, string> = {}): TransportResult => ({
  kind: 'response',
  response: new Response(status === 204 ? null : 'ok', { status, headers }),
});

/** Answers by path (query left out), in order, repeating the last answer; 'throw' breaks the contract. */
function pathTransport(script: Record<string, (TransportResult | 'throw')[]>): Transport & {
  calls: TransportRequest[];
} {
  const calls: TransportRequest[] = [];
  const counts = new Map<string, number>();
  return {
    name: 'by-path',
    calls,
    send(request) {
      calls.push(request);
      const path = new URL(request.url).pathname;
      const n = counts.get(path) ?? 0;
      counts.set(path, n + 1);
      const replies = script[path] ?? [respond(404)];
      const reply = replies[Math.min(n, replies.length - 1)]!;
      if (reply === 'throw')
        return Promise.reject(new TypeError(`could not send ${request.url} (${SECRETS.crash})`));
      return Promise.resolve(
        reply.kind === 'response' ? { ...reply, response: reply.response.clone() } : reply,
      );
    },
  };
}

/** A memory store holding an entry a previous process left, whose first write fails with a chatty error. */
async function seededStore(): Promise<OutboxStore> {
  const store = memoryStore();
  const left: OutboxEntry = {
    id: 'left-1',
    createdAt: 0,
    request: {
      method: 'PUT',
      path: `/v1/profile?session=${SECRETS.storedQuery}`,
      headers: { 'x-session': SECRETS.storedHeader },
      body: `{"ssn":"${SECRETS.storedBody}"}`,
    },
    idempotencyKey: SECRETS.storedKey,
    attempts: 0,
    nextAttemptAt: 0,
    failures: [
      {
        class: 'unavailable',
        requestSent: 'yes',
        origin: 'primary',
        status: 503,
        message: 'HTTP 503',
        // A store may keep more on a failure than the machine reads.
        ...({ extra: SECRETS.storedHeader } as object),
      },
    ],
    status: 'pending',
  };
  await store.add(left);
  let failedOnce = false;
  return {
    ...store,
    update: (entry) => {
      if (failedOnce) return store.update(entry);
      failedOnce = true;
      // Like a database error whose fields quote the row.
      return Promise.reject(
        Object.assign(new Error(`update failed: ${SECRETS.store}`), { detail: SECRETS.store }),
      );
    },
  };
}

describe('inspection and secrets (rule 9)', () => {
  it('shows the inspector no query, header value, body, idempotency key, token or error detail', async () => {
    const clock = simulatedClock();
    const records: string[] = [];
    const types = new Set<string>();
    let refreshes = 0;
    const transport = pathTransport({
      '/v1/orders': [respond(503, { 'retry-after': '1' }), respond(401), respond(201)],
      '/v1/refresh-fails': [respond(401)],
      '/v1/crash': ['throw', respond(200)],
      '/v1/durable': [{ kind: 'error', phase: 'connect', message: 'connect ECONNREFUSED' }, respond(201)],
      '/v1/profile': [respond(204)],
    });
    const client = createFailoverClient({
      origins: [{ id: 'primary', url: 'https://api.example.test' }],
      clock,
      transport,
      random: () => 0.5,
      store: await seededStore(),
      auth: {
        headers: () => ({ authorization: `Bearer ${SECRETS.token}` }),
        refresh: () => {
          refreshes += 1;
          // The second request's refresh fails, quoting what it had.
          return refreshes === 1
            ? Promise.resolve()
            : Promise.reject(new Error(`refresh failed for ${SECRETS.refresh}`));
        },
      },
      inspect: withInspector((event) => {
        records.push(serialise(event));
        types.add(event.type === '@xstate.event' ? `event:${event.event.type}` : event.type);
      }),
    });
    const secretRequest = (path: string, lifetime: 'interactive' | 'durable' = 'interactive') =>
      client.request({
        method: 'POST',
        path: `${path}?api_key=${SECRETS.query}#frag`,
        headers: { 'x-api-key': SECRETS.header },
        body: `{"card":"${SECRETS.body}"}`,
        idempotencyKey: SECRETS.key,
        lifetime,
      });

    const interactive = secretRequest('/v1/orders');
    await clock.runAll();
    expect(await interactive).toMatchObject({ status: 'succeeded', attempts: 3 });

    const refreshFails = secretRequest('/v1/refresh-fails');
    await clock.runAll();
    expect(await refreshFails).toMatchObject({ status: 'failed', reason: 'unauthorized' });

    const crash = secretRequest('/v1/crash');
    await clock.runAll();
    expect(await crash).toMatchObject({ status: 'succeeded', attempts: 2 });

    const durable = secretRequest('/v1/durable', 'durable');
    await clock.runAll();
    await durable;
    await client.outbox.flush();
    await clock.runAll();
    expect(await client.outbox.list()).toEqual([]);
    await client.close();

    // Every secret reached the transport: the test would see it had it leaked.
    const sent = JSON.stringify(transport.calls.map(({ signal: _, ...call }) => call));
    for (const secret of [SECRETS.token, SECRETS.query, SECRETS.header, SECRETS.body, SECRETS.key])
      expect(sent).toContain(secret);
    for (const secret of [SECRETS.storedQuery, SECRETS.storedHeader, SECRETS.storedBody, SECRETS.storedKey])
      expect(sent).toContain(secret);
    // The observer saw the paths the secrets would take: loaded and enqueued entries, the actors' errors.
    for (const type of [
      'event:outbox.enqueued',
      'event:xstate.done.actor.loadEntries',
      'event:commit.failed',
      'event:xstate.error.actor.refreshAuth',
      'event:xstate.error.actor.transport',
      '@xstate.snapshot',
      '@xstate.action',
    ])
      expect(types).toContain(type);
    const leaks = Object.entries(SECRETS).flatMap(([name, secret]) => {
      const record = records.find((r) => r.includes(secret));
      return record === undefined ? [] : [`${name}: ${record}`];
    });
    expect(leaks).toEqual([]);
    const all = records.join('\n');
    expect(all).not.toContain('#frag');
    // What the machines hold instead: whether there is a key, and the entries' ids.
    expect(all).toContain('"hasIdempotencyKey":true');
    expect(all).toContain('left-1');
  });

  it('keeps the whole policy in the machines, as it holds numbers, statuses, enumerations and header names only', () => {
    // docs/design.md "What the machines hold": a function, a path or a header value added to the policy would
    // reach every inspector; this lists every leaf so that such an addition is decided, not slipped in.
    const leaves: string[] = [];
    const walk = (value: unknown, path: string) => {
      if (Array.isArray(value)) value.forEach((item, i) => walk(item, `${path}[${i}]`));
      else if (typeof value === 'object' && value !== null)
        for (const [key, inner] of Object.entries(value)) walk(inner, `${path}.${key}`);
      else leaves.push(`${path}: ${typeof value}`);
    };
    walk(definePolicy({ attemptHeader: 'X-Attempt' }), 'policy');
    const strings = leaves.filter((leaf) => leaf.endsWith(': string'));
    expect(strings).toEqual([
      'policy.backoff.jitter: string',
      'policy.idempotency.header: string',
      'policy.attemptHeader: string',
      'policy.health.reprobeJitter: string',
      'policy.durable.backoff: string',
      'policy.durable.jitter: string',
      'policy.durable.order: string',
    ]);
    expect(leaves.filter((leaf) => !/: (number|string)$/.test(leaf))).toEqual([]);
  });
});
