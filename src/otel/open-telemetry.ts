import {
  context,
  metrics,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Counter,
  type Gauge,
  type HrTime,
  type Histogram,
  type Link,
  type MeterProvider,
  type Span,
  type SpanContext,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { HealthState } from '../../machines/origin-health/origin-health.types.js';
import type { OutboxMachineEmitted } from '../../machines/outbox/outbox.types.js';
import type { RequestMachineEmitted } from '../../machines/request/request.types.js';
import type {
  Telemetry,
  TelemetryClient,
  TelemetryEnd,
  TelemetryNote,
  TelemetryRequest,
  TelemetryRun,
  TelemetrySession,
} from '../runtime/telemetry.js';

export interface OpenTelemetryOptions {
  /** @default the global tracer provider (`trace.getTracerProvider()` from @opentelemetry/api) */
  tracerProvider?: TracerProvider;
  /** @default the global meter provider (`metrics.getMeterProvider()` from @opentelemetry/api) */
  meterProvider?: MeterProvider;
}

/** The instrumentation scope of every span and metric. */
export const SCOPE = 'failwise';

/** The HTTP semantic conventions' advised buckets for `http.client.request.duration`, in seconds. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** Methods the HTTP semantic conventions know; any other is `_OTHER`. */
const KNOWN_METHODS = new Set([
  'CONNECT',
  'DELETE',
  'GET',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'POST',
  'PUT',
  'TRACE',
]);

/** Links to durable requests kept for their later sends, oldest dropped first past this many. */
const MAX_LINKS = 10_000;

/**
 * The client's `telemetry` option for OpenTelemetry (docs/telemetry.md): one span per `client.request`, one
 * `CLIENT` span per attempt under it (HTTP semantic conventions), span events for each decision, and metrics.
 * The providers are read when a client starts, so the globals an app registers later still count.
 */
export function openTelemetry(options: OpenTelemetryOptions = {}): Telemetry {
  return {
    start: (client) =>
      startSession(
        client,
        options.tracerProvider ?? trace.getTracerProvider(),
        options.meterProvider ?? metrics.getMeterProvider(),
      ),
  };
}

/**
 * The clock's milliseconds as OpenTelemetry's [seconds, nanoseconds], exactly: the SDK would read a plain number
 * below its process's start as `performance.now()` time.
 */
const hrTime = (ms: number): HrTime => {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
};

interface OriginAttributes {
  'server.address': string;
  'server.port': number;
  'url.scheme': string;
  base: string;
}

interface Instruments {
  duration: Histogram;
  attempts: Counter;
  retries: Counter;
  failovers: Counter;
  deadLetters: Counter;
  outboxSize: Gauge;
}

function startSession(
  client: TelemetryClient,
  tracerProvider: TracerProvider,
  meterProvider: MeterProvider,
): TelemetrySession {
  const tracer = tracerProvider.getTracer(SCOPE);
  const meter = meterProvider.getMeter(SCOPE);
  const instruments: Instruments = {
    duration: meter.createHistogram('http.client.request.duration', {
      unit: 's',
      description: 'Duration of each HTTP attempt failwise made.',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    attempts: meter.createCounter('failwise.attempts', {
      unit: '{attempt}',
      description: 'Attempts started.',
    }),
    retries: meter.createCounter('failwise.retries', { unit: '{retry}', description: 'Retries scheduled.' }),
    failovers: meter.createCounter('failwise.failovers', {
      unit: '{failover}',
      description: 'Times the origin set failed over from its primary.',
    }),
    deadLetters: meter.createCounter('failwise.dead_letters', {
      unit: '{entry}',
      description: 'Outbox entries dead-lettered.',
    }),
    outboxSize: meter.createGauge('failwise.outbox.size', {
      unit: '{entry}',
      description: 'Entries in the outbox store, dead-lettered ones included.',
    }),
  };
  const origins = new Map<string, OriginAttributes>();
  for (const { id, base } of client.origins) {
    const url = new URL(base);
    origins.set(id, {
      'server.address': url.hostname.replace(/^\[(.*)\]$/, '$1'),
      'server.port': url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80,
      'url.scheme': url.protocol.slice(0, -1),
      base,
    });
  }
  /** The span context of each durable request this session saw, by entry id: its later sends link to it. */
  const links = new Map<string, SpanContext>();

  return {
    request(request, at) {
      const span = tracer.startSpan(
        `failwise ${request.method}`,
        { kind: SpanKind.INTERNAL, startTime: hrTime(at), attributes: requestAttributes(request) },
        context.active(),
      );
      if (request.lifetime === 'durable') {
        if (links.size >= MAX_LINKS) links.delete(links.keys().next().value!);
        links.set(request.requestId, span.spanContext());
      }
      return new Run(span, tracer, request, instruments, origins);
    },
    send(request, at, during) {
      const linked = links.get(request.requestId);
      const spanLinks: Link[] = linked && !during ? [{ context: linked }] : [];
      const parent = during instanceof Run ? trace.setSpan(context.active(), during.span) : context.active();
      const span = tracer.startSpan(
        `failwise send ${request.method}`,
        {
          kind: SpanKind.INTERNAL,
          startTime: hrTime(at),
          attributes: requestAttributes(request),
          links: spanLinks,
        },
        parent,
      );
      return new Run(span, tracer, request, instruments, origins);
    },
    healthChanged(from: HealthState, to: HealthState, origin: string | undefined) {
      // A failback probe that fails returns to failedOver: not a new failover.
      if (to === 'failedOver' && (from === 'healthy' || from === 'suspect'))
        instruments.failovers.add(1, origin === undefined ? {} : { 'failwise.origin': origin });
    },
    outbox(event: OutboxMachineEmitted) {
      if (event.type === 'outbox-changed') instruments.outboxSize.record(event.size);
      else if (event.type === 'entry-dead-lettered') {
        instruments.deadLetters.add(1, { 'failwise.dead_reason': event.reason });
        links.delete(event.id);
      } else if (event.type === 'entry-sent') links.delete(event.id);
    },
  };
}

function requestAttributes(request: TelemetryRequest): Attributes {
  return {
    ...methodAttributes(request.method),
    'url.path': request.path,
    'failwise.request_id': request.requestId,
    'failwise.lifetime': request.lifetime,
    // The route that gave the request its policy (its id, else its index): never its path's query.
    ...(request.route !== undefined && { 'failwise.route': request.route }),
  };
}

function methodAttributes(method: string): Attributes {
  const upper = method.toUpperCase();
  return KNOWN_METHODS.has(upper)
    ? { 'http.request.method': upper }
    : { 'http.request.method': '_OTHER', 'http.request.method_original': method };
}

/** One attempt's span, and what its duration metric needs. */
interface Attempt {
  span: Span;
  startedAt: number;
  metric: Attributes;
  /** When it succeeded: its span waits for the run's end, which has the response's status. */
  succeededAt?: number;
}

/** One request or send: its span, and the spans of its attempts. */
class Run implements TelemetryRun {
  private readonly attempts = new Map<number, Attempt>();
  private lastOrigin: string | undefined;
  private ended = false;

  constructor(
    readonly span: Span,
    private readonly tracer: Tracer,
    private readonly request: TelemetryRequest,
    private readonly instruments: Instruments,
    private readonly origins: ReadonlyMap<string, OriginAttributes>,
  ) {}

  emitted(event: RequestMachineEmitted): void {
    if (this.ended) return;
    const time = hrTime(event.at);
    switch (event.type) {
      case 'attempt-started': {
        const origin = this.origins.get(event.origin);
        if (this.lastOrigin !== undefined && this.lastOrigin !== event.origin)
          this.span.addEvent(
            'failwise.failover',
            { 'failwise.origin.from': this.lastOrigin, 'failwise.origin.to': event.origin },
            time,
          );
        this.lastOrigin = event.origin;
        const metric: Attributes = {
          ...methodAttributes(this.request.method),
          ...(origin && {
            'server.address': origin['server.address'],
            'server.port': origin['server.port'],
            'url.scheme': origin['url.scheme'],
          }),
        };
        const attributes: Attributes = {
          ...metric,
          'url.path': this.request.path,
          ...(origin && { 'url.full': origin.base + this.request.path }),
          'failwise.origin': event.origin,
          'failwise.attempt': event.attempt,
          ...(event.attempt >= 2 && { 'http.request.resend_count': event.attempt - 1 }),
        };
        const span = this.tracer.startSpan(
          this.request.method.toUpperCase(),
          { kind: SpanKind.CLIENT, startTime: time, attributes },
          trace.setSpan(context.active(), this.span),
        );
        this.attempts.set(event.attempt, { span, startedAt: event.at, metric });
        this.instruments.attempts.add(1, { 'failwise.origin': event.origin });
        return;
      }
      case 'attempt-succeeded': {
        const attempt = this.attempts.get(event.attempt);
        if (attempt) attempt.succeededAt = event.at;
        return;
      }
      case 'attempt-failed': {
        const { failure } = event;
        this.endAttempt(event.attempt, event.at, failure.class, failure.status);
        return;
      }
      case 'retry-scheduled': {
        const { failure } = event;
        this.span.addEvent(
          'failwise.retry_scheduled',
          {
            'failwise.attempt': event.attempt,
            'failwise.delay_ms': event.delayMs,
            'error.type': failure.class,
            ...(failure.status !== undefined && { 'http.response.status_code': failure.status }),
            ...(failure.retryAfterMs !== undefined && { 'failwise.retry_after_ms': failure.retryAfterMs }),
          },
          time,
        );
        this.instruments.retries.add(1, { 'failwise.origin': event.origin, 'error.type': failure.class });
        return;
      }
    }
  }

  inject(attempt: number, headers: Record<string, string>): void {
    const open = this.attempts.get(attempt);
    // The registered propagator writes its fields (W3C's `traceparent` and `tracestate`, B3's...) as the
    // attempt's span is their parent: the server's spans are children of this attempt, not of the request.
    if (open) propagation.inject(trace.setSpan(context.active(), open.span), headers);
  }

  note(note: TelemetryNote, at: number): void {
    if (this.ended) return;
    if (note.type === 'auth-refresh')
      this.span.addEvent('failwise.auth_refresh', { 'failwise.origin': note.origin }, hrTime(at));
    else this.span.addEvent('failwise.reconcile', { 'failwise.reconcile.result': note.result }, hrTime(at));
  }

  end(end: TelemetryEnd, at: number): void {
    if (this.ended) return;
    this.ended = true;
    const span = this.span;
    const time = hrTime(at);
    if (end.status === 'rejected') {
      this.endOpenAttempts(at, undefined, end.error);
      span.setAttributes({ 'failwise.outcome': 'rejected', 'error.type': end.error });
      span.setStatus({ code: SpanStatusCode.ERROR, message: end.error });
      return span.end(time);
    }
    const statusCode = 'response' in end ? end.response?.status : undefined;
    if (end.status === 'succeeded') {
      this.endOpenAttempts(at, statusCode, undefined);
      span.setAttributes({
        'failwise.outcome': 'succeeded',
        'failwise.attempts': end.attempts,
        ...(statusCode !== undefined && { 'http.response.status_code': statusCode }),
        ...('reconciled' in end && end.reconciled && { 'failwise.reconciled': true }),
        ...('stale' in end && end.stale && { 'failwise.stale': true }),
      });
      return span.end(time);
    }
    if (end.status === 'deferred') {
      this.endOpenAttempts(at, undefined, 'deferred');
      span.addEvent('failwise.deferred', { 'failwise.reason': end.reason }, time);
      span.setAttributes({ 'failwise.outcome': 'deferred', 'failwise.reason': end.reason });
      return span.end(time);
    }
    const errorType = end.failure?.class ?? end.reason;
    this.endOpenAttempts(at, undefined, end.reason);
    span.setAttributes({
      'failwise.outcome': 'failed',
      'failwise.reason': end.reason,
      'failwise.attempts': end.attempts,
      'error.type': errorType,
      ...(statusCode !== undefined && { 'http.response.status_code': statusCode }),
    });
    // The caller's own abort is not an error of the request.
    if (end.reason !== 'cancelled') span.setStatus({ code: SpanStatusCode.ERROR, message: end.reason });
    span.end(time);
  }

  private endAttempt(
    attempt: number,
    at: number,
    errorType: string | undefined,
    statusCode: number | undefined,
  ): void {
    const open = this.attempts.get(attempt);
    if (!open) return;
    this.attempts.delete(attempt);
    const { span } = open;
    const end = open.succeededAt ?? at;
    const result: Attributes = {
      ...(statusCode !== undefined && { 'http.response.status_code': statusCode }),
      ...(errorType !== undefined && { 'error.type': errorType }),
    };
    span.setAttributes(result);
    if (errorType !== undefined && errorType !== 'cancelled')
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
    span.end(hrTime(end));
    this.instruments.duration.record(Math.max(0, end - open.startedAt) / 1000, { ...open.metric, ...result });
  }

  /** At the run's end: a succeeded attempt gets the response's status; one still in flight, why it stopped. */
  private endOpenAttempts(at: number, statusCode: number | undefined, errorType: string | undefined): void {
    for (const [number, attempt] of [...this.attempts]) {
      if (attempt.succeededAt !== undefined) this.endAttempt(number, at, undefined, statusCode);
      else this.endAttempt(number, at, errorType, undefined);
    }
  }
}
