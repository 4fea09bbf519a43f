import { propagation, SpanKind, SpanStatusCode, type HrTime } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { manualConnectivity } from '../../src/connectivity/manual-connectivity.js';
import { createFailoverClient } from '../../src/index.node.js';
import { DURATION_BUCKETS, openTelemetry } from '../../src/otel.js';
import { FailwiseError } from '../../src/errors/failwise-error.js';
import { PolicyError } from '../../src/errors/policy-error.js';
import { memoryStore } from '../../src/stores/memory-store.js';
import type { Telemetry } from '../../src/runtime/telemetry.js';
import { harness, type Harness } from '../helpers/client-harness.js';
import { closedPort, useLoopback } from '../helpers/loopback-server.js';
import { fail, respond } from '../helpers/scripted-transport.js';

// The real OpenTelemetry SDK (in-memory span and metric exporters) behind `openTelemetry()`: what an app
// running failwise with telemetry sees, for a retry, a failover, a refused connection, a deferral and its later
// send, and a cancellation, with secrets planted wherever a request can carry them.

const SECRETS = {
  query: 'SECRETquery',
  header: 'SECREThdr',
  token: 'SECRETtoken',
  body: 'SECRETbody',
  key: 'SECRETkey',
};

interface Sdk {
  spans(): ReadableSpan[];
  metrics(): Promise<MetricData[]>;
  telemetry: Telemetry;
}

const sdks: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of sdks.splice(0)) await stop();
});

function sdk(): Sdk {
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // Exported only by forceFlush: the interval never comes within a test.
  const reader = new PeriodicExportingMetricReader({
    exporter: metricExporter,
    exportIntervalMillis: 3_600_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  sdks.push(async () => {
    await meterProvider.shutdown();
    await tracerProvider.shutdown();
  });
  return {
    spans: () => spanExporter.getFinishedSpans(),
    async metrics() {
      await reader.forceFlush();
      const exported = metricExporter.getMetrics();
      return exported.at(-1)?.scopeMetrics.flatMap((scope) => scope.metrics) ?? [];
    },
    telemetry: openTelemetry({ tracerProvider, meterProvider }),
  };
}

const ms = (time: HrTime) => time[0] * 1000 + time[1] / 1e6;
const named = (metrics: MetricData[], name: string) => metrics.find((m) => m.descriptor.name === name);
/** A counter's data points as [attributes, value]. */
const points = (metric: MetricData | undefined) =>
  (metric?.dataPoints ?? []).map((point) => [point.attributes, point.value]);
const byKind = (spans: ReadableSpan[], kind: SpanKind) => spans.filter((span) => span.kind === kind);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

/** Runs the simulated clock at its current time until `promise` settles. */
async function settled<T>(h: Harness, promise: Promise<T>): Promise<T> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 100 && !done; i++) await h.clock.increment(0);
  return promise;
}

/** Everything the SDK holds, as text: spans (names, attributes, events, links) and metrics. */
async function everything(o: Sdk): Promise<string> {
  const spans = o.spans().map((span) => ({
    name: span.name,
    attributes: span.attributes,
    events: span.events,
    links: span.links,
    status: span.status,
  }));
  return JSON.stringify({ spans, metrics: await o.metrics() });
}

const expectNoSecret = (text: string) => {
  for (const [where, secret] of Object.entries(SECRETS)) expect(text, where).not.toContain(secret);
};

const twoOrigins = [
  { id: 'primary', url: 'https://api.example.test' },
  { id: 'backup', url: 'https://backup.example.test:8443' },
];

describe('openTelemetry()', () => {
  it('traces a retried request as one span with a CLIENT span per attempt, on the client clock', async () => {
    const o = sdk();
    const h = harness(
      [
        { reply: respond(503), latencyMs: 40 },
        { reply: respond(200), latencyMs: 30 },
      ],
      {
        telemetry: o.telemetry,
        policy: { backoff: { jitter: 'none', initialMs: 100 } },
      },
    );
    await h.clock.increment(1_000);
    const outcome = await h.run({ method: 'GET', path: '/v1/items?page=2' });
    expect(outcome).toMatchObject({ status: 'succeeded', attempts: 2 });

    const spans = o.spans();
    const [request] = byKind(spans, SpanKind.INTERNAL);
    const attempts = byKind(spans, SpanKind.CLIENT);
    expect(spans).toHaveLength(3);
    expect(request!.name).toBe('failwise GET');
    expect(parentOf(request!)).toBeUndefined();
    expect(request!.status.code).toBe(SpanStatusCode.UNSET);
    expect(request!.attributes).toEqual({
      'http.request.method': 'GET',
      'url.path': '/v1/items',
      'failwise.request_id': 'r1',
      'failwise.lifetime': 'interactive',
      'failwise.outcome': 'succeeded',
      'failwise.attempts': 2,
      'http.response.status_code': 200,
    });
    expect(attempts.map((span) => span.name)).toEqual(['GET', 'GET']);
    for (const span of attempts) {
      expect(parentOf(span)).toBe(request!.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(request!.spanContext().traceId);
    }
    const common = {
      'http.request.method': 'GET',
      'server.address': 'api.example.test',
      'server.port': 443,
      'url.scheme': 'https',
      'url.path': '/v1/items',
      'url.full': 'https://api.example.test/v1/items',
      'failwise.origin': 'primary',
    };
    expect(attempts[0]!.attributes).toEqual({
      ...common,
      'failwise.attempt': 1,
      'http.response.status_code': 503,
      'error.type': 'unavailable',
    });
    expect(attempts[0]!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'unavailable' });
    expect(attempts[1]!.attributes).toEqual({
      ...common,
      'failwise.attempt': 2,
      'http.request.resend_count': 1,
      'http.response.status_code': 200,
    });
    // Times are the simulated clock's: 1000 start, 40 ms attempt, 100 ms backoff, 30 ms attempt.
    expect([ms(request!.startTime), ms(request!.endTime)]).toEqual([1_000, 1_170]);
    expect(attempts.map((span) => [ms(span.startTime), ms(span.endTime)])).toEqual([
      [1_000, 1_040],
      [1_140, 1_170],
    ]);
    expect(request!.events.map((event) => [event.name, event.attributes, ms(event.time)])).toEqual([
      [
        'failwise.retry_scheduled',
        {
          'failwise.attempt': 1,
          'failwise.delay_ms': 100,
          'error.type': 'unavailable',
          'http.response.status_code': 503,
        },
        1_040,
      ],
    ]);

    const metrics = await o.metrics();
    const duration = named(metrics, 'http.client.request.duration')!;
    expect(duration.descriptor.unit).toBe('s');
    const histogram = duration.dataPoints.map((point) => [point.attributes, point.value]);
    expect(histogram).toEqual([
      [
        expect.objectContaining({ 'http.response.status_code': 503, 'error.type': 'unavailable' }),
        expect.objectContaining({
          count: 1,
          sum: 0.04,
          buckets: expect.objectContaining({ boundaries: DURATION_BUCKETS }),
        }),
      ],
      [
        expect.objectContaining({ 'http.response.status_code': 200, 'server.port': 443 }),
        expect.objectContaining({ count: 1, sum: 0.03 }),
      ],
    ]);
    expect(points(named(metrics, 'failwise.attempts'))).toEqual([[{ 'failwise.origin': 'primary' }, 2]]);
    expect(points(named(metrics, 'failwise.retries'))).toEqual([
      [{ 'failwise.origin': 'primary', 'error.type': 'unavailable' }, 1],
    ]);
    await h.client.close();
  });

  it('names the route that gave a request its policy on its span (its id, else its index), never a query', async () => {
    const o = sdk();
    const h = harness([{ reply: respond(200) }], {
      telemetry: o.telemetry,
      routes: [
        { id: 'feed', match: { path: '/v1/feed' }, policy: { attempts: { max: 5 } } },
        { match: { method: 'POST' }, policy: { attempts: { max: 1 } } },
      ],
    });
    await h.run({ path: '/v1/feed?cursor=9' });
    await h.run({ method: 'POST', path: '/v1/pay?card=4242', body: '{}' });
    await h.run({ path: '/v1/other' });
    const requests = byKind(o.spans(), SpanKind.INTERNAL);
    expect(requests.map((span) => span.attributes['failwise.route'])).toEqual(['feed', 1, undefined]);
    expect(requests.map((span) => span.attributes['url.path'])).toEqual(['/v1/feed', '/v1/pay', '/v1/other']);
  });

  it('carries no query, header value, token, body or idempotency key, through a retry and an auth refresh', async () => {
    const o = sdk();
    let token = `old-${SECRETS.token}`;
    const h = harness([{ reply: respond(401) }, { reply: respond(503) }, { reply: respond(201) }], {
      telemetry: o.telemetry,
      auth: {
        headers: () => ({ authorization: `Bearer ${token}` }),
        refresh: async () => void (token = `new-${SECRETS.token}`),
      },
      reconcile: async () => ({ status: 'not-applied' }),
    });
    const outcome = await h.run({
      method: 'POST',
      path: `/v1/orders?token=${SECRETS.query}#${SECRETS.query}`,
      headers: { 'x-api-key': SECRETS.header },
      body: JSON.stringify({ card: SECRETS.body }),
      idempotencyKey: SECRETS.key,
    });
    expect(outcome).toMatchObject({ status: 'succeeded', attempts: 3 });
    // The secrets did travel: they were there to leak.
    const sent = JSON.stringify(h.transport.calls.map(({ url, headers, body }) => ({ url, headers, body })));
    for (const secret of Object.values(SECRETS)) expect(sent).toContain(secret);
    const [request] = byKind(o.spans(), SpanKind.INTERNAL);
    expect(request!.events.map((event) => event.name)).toEqual([
      'failwise.auth_refresh',
      'failwise.retry_scheduled',
    ]);
    expect(request!.events[0]!.attributes).toEqual({ 'failwise.origin': 'primary' });
    expectNoSecret(await everything(o));
    await h.client.close();
  });

  it('marks a reconcile with a span event saying what the app answered', async () => {
    const o = sdk();
    const h = harness([{ reply: fail('response-timeout') }, { reply: respond(201) }], {
      telemetry: o.telemetry,
      reconcile: async () => ({ status: 'not-applied' }),
      policy: { backoff: { jitter: 'none', initialMs: 0, maxMs: 0 } },
    });
    // A keyless write whose attempt may have reached the server: sent again only after reconcile (rule 2).
    expect(await h.run({ method: 'POST', path: '/v1/orders', body: '{}' })).toMatchObject({
      status: 'succeeded',
      attempts: 2,
    });
    const [request] = byKind(o.spans(), SpanKind.INTERNAL);
    const reconciled = request!.events.filter((event) => event.name === 'failwise.reconcile');
    expect(reconciled.map((event) => event.attributes)).toEqual([
      { 'failwise.reconcile.result': 'not-applied' },
    ]);
    await h.client.close();
  });

  it('marks a failover with a span event, puts the next attempt on the backup, and counts it', async () => {
    const o = sdk();
    const h = harness([{ reply: fail('connect') }, { reply: fail('connect') }, { reply: respond(200) }], {
      telemetry: o.telemetry,
      origins: twoOrigins,
      policy: { health: { suspectAfter: 1, failoverAfter: 2 }, backoff: { jitter: 'none', initialMs: 100 } },
    });
    // A PUT goes where the health machine names each time (a read's retry would take the backup at once), so
    // its second failure fails the set over and its third attempt follows.
    const pending = h.client.request({ method: 'PUT', path: '/v1/items', body: '{}' });
    await h.clock.increment(1_000);
    expect(await pending).toMatchObject({ status: 'succeeded', origin: 'backup', attempts: 3 });
    const [request] = byKind(o.spans(), SpanKind.INTERNAL);
    const attempts = byKind(o.spans(), SpanKind.CLIENT);
    expect(
      attempts.map((span) => [span.attributes['server.address'], span.attributes['server.port']]),
    ).toEqual([
      ['api.example.test', 443],
      ['api.example.test', 443],
      ['backup.example.test', 8443],
    ]);
    expect(attempts.map((span) => span.attributes['error.type'])).toEqual(['connect', 'connect', undefined]);
    expect(attempts[2]!.attributes['http.request.resend_count']).toBe(2);
    const failover = request!.events.find((event) => event.name === 'failwise.failover');
    expect(failover?.attributes).toEqual({
      'failwise.origin.from': 'primary',
      'failwise.origin.to': 'backup',
    });
    expect(points(named(await o.metrics(), 'failwise.failovers'))).toEqual([
      [{ 'failwise.origin': 'backup' }, 1],
    ]);
    await h.client.close();
  });

  it('counts a failover once, not again each time a failback probe fails and the set stays failed over', async () => {
    const o = sdk();
    const h = harness(
      [
        { reply: fail('connect') },
        { reply: fail('connect') },
        { reply: respond(200) },
        { reply: respond(503) },
      ],
      {
        telemetry: o.telemetry,
        origins: twoOrigins,
        policy: {
          health: { suspectAfter: 1, failoverAfter: 2 },
          backoff: { jitter: 'none', initialMs: 100 },
        },
      },
    );
    const pending = h.client.request({ method: 'PUT', path: '/v1/items', body: '{}' });
    await h.clock.increment(1_000);
    await pending;
    // The primary's probes get 503: failedOver -> probingFailback -> failedOver, again and again.
    for (let i = 0; i < 10; i++) await h.clock.increment(60_000);
    const back = h.events.filter((e) => e.type === 'health-changed' && e.from === 'probingFailback');
    expect(back.length).toBeGreaterThan(1);
    expect(points(named(await o.metrics(), 'failwise.failovers'))).toEqual([
      [{ 'failwise.origin': 'backup' }, 1],
    ]);
    await h.client.close();
  });

  it('records a refused connection to a real loopback port as error.type connect, with no status', async () => {
    const o = sdk();
    const port = await closedPort();
    const client = createFailoverClient({
      origins: [{ id: 'local', url: `http://127.0.0.1:${port}`, allowInsecure: true }],
      telemetry: o.telemetry,
      policy: { attempts: { max: 1 }, budgetMs: 2_000 },
    });
    const outcome = await client.request({ path: `/v1/ping?token=${SECRETS.query}` });
    expect(outcome).toMatchObject({ status: 'failed', failure: { class: 'connect' } });
    const [request] = byKind(o.spans(), SpanKind.INTERNAL);
    const [attempt] = byKind(o.spans(), SpanKind.CLIENT);
    expect(attempt!.attributes).toMatchObject({
      'server.address': '127.0.0.1',
      'server.port': port,
      'url.scheme': 'http',
      'url.path': '/v1/ping',
      'error.type': 'connect',
    });
    expect(attempt!.attributes).not.toHaveProperty('http.response.status_code');
    expect(request!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'attempts-exhausted' });
    expect(request!.attributes).toMatchObject({
      'error.type': 'connect',
      'failwise.reason': 'attempts-exhausted',
    });
    expectNoSecret(await everything(o));
    await client.close();
  });

  it('ends a deferred durable request with a deferral event, and traces its later send as a span linked to it', async () => {
    const o = sdk();
    const connectivity = manualConnectivity('offline');
    const h = harness([{ reply: respond(201), latencyMs: 20 }], {
      telemetry: o.telemetry,
      connectivity,
      auth: {
        headers: () => ({ authorization: `Bearer ${SECRETS.token}` }),
        refresh: async () => {},
      },
    });
    const outcome = await settled(
      h,
      h.client.request({
        method: 'POST',
        path: `/v1/notes?sig=${SECRETS.query}`,
        headers: { 'x-note-tag': SECRETS.header },
        body: SECRETS.body,
        lifetime: 'durable',
        idempotencyKey: SECRETS.key,
      }),
    );
    expect(outcome).toMatchObject({ status: 'deferred', reason: 'offline' });
    const [request] = o.spans();
    expect(request!.name).toBe('failwise POST');
    expect(request!.attributes).toMatchObject({
      'failwise.lifetime': 'durable',
      'failwise.outcome': 'deferred',
      'failwise.reason': 'offline',
    });
    expect(request!.events.map((event) => [event.name, event.attributes])).toEqual([
      ['failwise.deferred', { 'failwise.reason': 'offline' }],
    ]);

    await h.clock.increment(5_000);
    connectivity.set('online');
    const flushed = h.client.outbox.flush();
    // The send starts at 5000 and its answer takes 20 ms.
    for (let i = 0; i < 20; i++) await h.clock.increment(0);
    await h.clock.increment(20);
    await settled(h, flushed);
    expect(h.transport.calls).toHaveLength(1);
    const send = o.spans().find((span) => span.name === 'failwise send POST')!;
    expect(parentOf(send)).toBeUndefined();
    expect(send.links.map((link) => link.context)).toEqual([request!.spanContext()]);
    expect(send.attributes).toMatchObject({
      'failwise.request_id': request!.attributes['failwise.request_id'],
      'failwise.outcome': 'succeeded',
      'http.response.status_code': 201,
    });
    const [attempt] = byKind(o.spans(), SpanKind.CLIENT);
    expect(parentOf(attempt!)).toBe(send.spanContext().spanId);
    expect([ms(attempt!.startTime), ms(attempt!.endTime)]).toEqual([5_000, 5_020]);
    const metrics = await o.metrics();
    // The gauge's last value: the entry was sent and removed.
    expect(points(named(metrics, 'failwise.outbox.size'))).toEqual([[{}, 0]]);
    expectNoSecret(await everything(o));
    await h.client.close();
  });

  it('traces the first send of a durable request under the request, and counts a dead letter', async () => {
    const o = sdk();
    const h = harness([{ reply: respond(400) }], { telemetry: o.telemetry });
    const outcome = await settled(
      h,
      h.client.request({ method: 'POST', path: '/v1/notes', lifetime: 'durable' }),
    );
    expect(outcome).toMatchObject({ status: 'failed', reason: 'not-retryable' });
    await settled(h, h.client.outbox.flush());
    const request = o.spans().find((span) => span.name === 'failwise POST')!;
    const send = o.spans().find((span) => span.name === 'failwise send POST')!;
    expect(parentOf(send)).toBe(request.spanContext().spanId);
    expect(send.links).toEqual([]);
    expect(request.attributes).toMatchObject({ 'failwise.outcome': 'failed', 'error.type': 'client-error' });
    expect(points(named(await o.metrics(), 'failwise.dead_letters'))).toEqual([
      [{ 'failwise.dead_reason': 'not-retryable' }, 1],
    ]);
    await h.client.close();
  });

  it('ends the span of a durable request the store refused as rejected, with the error class only', async () => {
    const o = sdk();
    const store = memoryStore();
    store.add = () => Promise.reject(new Error(`disk full at /data/${SECRETS.body}`));
    const h = harness([{ reply: respond(201) }], { telemetry: o.telemetry, store });
    const request = h.client.request({ method: 'POST', path: '/v1/notes', lifetime: 'durable' });
    await expect(settled(h, request)).rejects.toThrow(FailwiseError);
    const [span] = o.spans();
    expect(span!.attributes).toMatchObject({ 'failwise.outcome': 'rejected', 'error.type': 'FailwiseError' });
    expect(span!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'FailwiseError' });
    expectNoSecret(await everything(o));
    await h.client.close();
  });

  it('ends a cancelled request and its attempt in flight at the abort, without an error status', async () => {
    const o = sdk();
    const h = harness([{ reply: 'hang' }], { telemetry: o.telemetry });
    const controller = new AbortController();
    const pending = h.client.request({ path: '/v1/slow', signal: controller.signal });
    await h.clock.increment(250);
    controller.abort();
    expect(await pending).toMatchObject({ status: 'failed', reason: 'cancelled' });
    const [request] = byKind(o.spans(), SpanKind.INTERNAL);
    const [attempt] = byKind(o.spans(), SpanKind.CLIENT);
    expect(request!.status.code).toBe(SpanStatusCode.UNSET);
    expect(request!.attributes).toMatchObject({
      'failwise.outcome': 'failed',
      'failwise.reason': 'cancelled',
    });
    expect(attempt!.attributes['error.type']).toBe('cancelled');
    expect(attempt!.status.code).toBe(SpanStatusCode.UNSET);
    expect([ms(attempt!.startTime), ms(attempt!.endTime)]).toEqual([0, 250]);
    expect(ms(request!.endTime)).toBe(250);
    await h.client.close();
  });

  it('is refused with a PolicyError naming the option when it is not what openTelemetry() returns', () => {
    const o = sdk();
    const origins = [{ id: 'primary', url: 'https://api.example.test' }];
    // A tracer provider given directly, instead of inside openTelemetry().
    expect(() => createFailoverClient({ origins, telemetry: new BasicTracerProvider() as never })).toThrow(
      new PolicyError([{ path: 'telemetry.start', message: 'expected a function' }]),
    );
    expect(() => createFailoverClient({ origins, telemetry: 'otel' as never })).toThrow(
      new PolicyError([{ path: 'telemetry', message: 'expected an object' }]),
    );
    expect(() => createFailoverClient({ origins, telemetry: o.telemetry })).not.toThrow();
  });
});

describe('trace context sent to the server', () => {
  const { serve } = useLoopback();
  afterEach(() => propagation.disable());

  it("sends each attempt's own span context as traceparent through the registered W3C propagator", async () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    // A loopback origin that answers 503 first, then 200: two attempts, two traceparents.
    const server = await serve(({ res }) => {
      res.statusCode = server.requests.length === 1 ? 503 : 200;
      res.end('ok');
    });
    const o = sdk();
    const events: unknown[] = [];
    const client = createFailoverClient({
      origins: [{ id: 'local', url: server.url, allowInsecure: true }],
      telemetry: o.telemetry,
      policy: { backoff: { initialMs: 0, maxMs: 0 } },
      onEvent: (event) => events.push(event),
    });
    const outcome = await client.request({ path: `/v1/items?token=${SECRETS.query}` });
    await client.close();
    expect(outcome).toMatchObject({ status: 'succeeded', attempts: 2 });

    const attempts = byKind(o.spans(), SpanKind.CLIENT).sort(
      (a, b) => Number(a.attributes['failwise.attempt']) - Number(b.attributes['failwise.attempt']),
    );
    expect(attempts).toHaveLength(2);
    expect(server.requests).toHaveLength(2);
    const [request] = byKind(o.spans(), SpanKind.INTERNAL);
    for (const [i, attempt] of attempts.entries()) {
      const { traceId, spanId, traceFlags } = attempt.spanContext();
      // version 00, the trace, the parent (this attempt's span), sampled.
      expect(server.requests[i]!.headers['traceparent']).toBe(
        `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`,
      );
      expect(traceId).toBe(request!.spanContext().traceId);
    }
    // Sent, never logged: no decision event carries the trace context (rule 9).
    const logged = JSON.stringify(events);
    for (const attempt of attempts) expect(logged).not.toContain(attempt.spanContext().spanId);
  });

  it('sends no trace header without a registered propagator, or without telemetry', async () => {
    const server = await serve(({ res }) => res.end('ok'));
    const o = sdk();
    for (const telemetry of [o.telemetry, undefined]) {
      const client = createFailoverClient({
        origins: [{ id: 'local', url: server.url, allowInsecure: true }],
        ...(telemetry ? { telemetry } : {}),
      });
      expect(await client.request({ path: '/v1/items' })).toMatchObject({ status: 'succeeded' });
      await client.close();
    }
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const untraced = createFailoverClient({
      origins: [{ id: 'local', url: server.url, allowInsecure: true }],
    });
    expect(await untraced.request({ path: '/v1/items' })).toMatchObject({ status: 'succeeded' });
    await untraced.close();
    expect(server.requests.map((request) => request.headers['traceparent'])).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });
});
