/**
 * The peers of the success and retry sections: failwise's public client next to a hand-written
 * loop, cockatiel (with and without a timeout) and p-retry, each over the same in-process sender, so
 * the figures are the cost of the retry machinery alone.
 */
import {
  ConsecutiveBreaker,
  TimeoutStrategy,
  circuitBreaker,
  handleAll,
  retry,
  timeout,
  wrap,
} from 'cockatiel';
import pRetry from 'p-retry';
import {
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';

import {
  createFailoverClient,
  systemClock,
  type Clock,
  type FailoverClient,
} from '../dist/src/index.node.js';
import { openTelemetry } from '../dist/src/otel.js';
import { WAIT_MS, type Peer } from './harness.js';
import type { PeerId } from './report.js';

/** The statuses every peer retries: failwise's default `retryableStatuses`. */
const RETRYABLE = new Set([408, 429, 502, 503, 504]);

/** A clock whose 0 ms timers run as microtasks; longer timers never fire (they are always cleared first). */
export const microClock: Clock = {
  now: () => 0,
  setTimeout(fn, ms) {
    const handle = { live: true };
    if (ms === 0) queueMicrotask(() => handle.live && fn());
    return handle;
  },
  clearTimeout(handle) {
    if (handle) (handle as { live: boolean }).live = false;
  },
};

/** What the in-process server does: see `sender`. */
export type Script = 'ok' | 'flaky' | 'waited';

/**
 * An in-process server: `ok` answers every send with a 204; `flaky` answers 503, then 204, then 503 ...
 * Every peer awaits each call before the next, and each call makes exactly two sends, so each call's
 * first send is the 503; `check` proves it by counting. `waited` answers every send with a 204 after a real
 * `WAIT_MS` timer, as a server across a network does: the process sleeps between a call's start and its end.
 */
export function sender(script: Script) {
  let sends = 0;
  return {
    send: (): Promise<Response> => {
      const first = sends++ % 2 === 0;
      if (script === 'waited')
        return new Promise((resolve) =>
          setTimeout(() => resolve(new Response(null, { status: 204 })), WAIT_MS),
        );
      return Promise.resolve(new Response(null, { status: script === 'flaky' && first ? 503 : 204 }));
    },
    sends: () => sends,
    reset: () => void (sends = 0),
  };
}

class RetryableStatus extends Error {
  constructor(readonly response: Response) {
    super(`status ${response.status}`);
  }
}

/** Throws for a retryable status, since cockatiel's `handleAll` and p-retry retry on errors. */
async function throwIfRetryable(send: () => Promise<Response>): Promise<Response> {
  const response = await send();
  if (RETRYABLE.has(response.status)) throw new RetryableStatus(response);
  return response;
}

/** What a careful app writes by hand: 3 attempts, retry on a retryable status or an error, 0 ms apart. */
export async function handLoop(send: () => Promise<Response>, attempts = 3): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await send();
      if (!RETRYABLE.has(response.status) || attempt >= attempts) return response;
    } catch (error) {
      if (attempt >= attempts) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}

/** Issue 10's cockatiel policy: 2 retries (3 attempts), a breaker, and a 10 s aggressive timeout per attempt. */
const cockatielWithTimeout = () =>
  wrap(
    retry(handleAll, { maxAttempts: 2 }),
    circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) }),
    timeout(10_000, TimeoutStrategy.Aggressive),
  );
const cockatielNoTimeout = () =>
  wrap(
    retry(handleAll, { maxAttempts: 2 }),
    circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) }),
  );

const statusOf = (result: Response | Awaited<ReturnType<FailoverClient['request']>>): number =>
  result instanceof Response ? result.status : result.status === 'succeeded' ? result.response.status : 0;

/**
 * Exporters that drop what they get (`code: 0` is SUCCESS): the row measures failwise's hooks and the SDK's span
 * and metric work, not an exporter's.
 */
const dropSpans: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: async () => {},
};
const dropMetrics: PushMetricExporter = {
  export: (_metrics, done) => done({ code: 0 }),
  forceFlush: async () => {},
  shutdown: async () => {},
};

/** failwise's telemetry on the real SDK: every span ended and exported, every measurement aggregated. */
function sdkTelemetry() {
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(dropSpans)] });
  const reader = new PeriodicExportingMetricReader({ exporter: dropMetrics, exportIntervalMillis: 60_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    telemetry: openTelemetry({ tracerProvider, meterProvider }),
    close: async () => void (await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()])),
  };
}

export interface PeerSet {
  peers: Peer[];
  close: () => Promise<void>;
}

/** The peers of one section, each with its own sender and its own checks. */
export function peersFor(script: Script): PeerSet {
  const sendsPerCall = script === 'flaky' ? 2 : 1;
  const clients: FailoverClient[] = [];
  const sdk = sdkTelemetry();
  const failwise = (clock: Clock, telemetry?: typeof sdk.telemetry) => (send: () => Promise<Response>) => {
    const client = createFailoverClient({
      origins: [{ id: 'primary', url: 'https://api.example.test' }],
      clock,
      transport: { name: 'bench', send: async () => ({ kind: 'response', response: await send() }) },
      policy: { backoff: { initialMs: 0, maxMs: 0 } },
      ...(telemetry && { telemetry }),
    });
    clients.push(client);
    return () => client.request({ path: '/x' });
  };
  const makers: Record<PeerId, (send: () => Promise<Response>) => () => Promise<Response | object>> = {
    failwise: failwise(systemClock),
    failwiseMicroClock: failwise(microClock),
    failwiseOtel: failwise(systemClock, sdk.telemetry),
    handLoop: (send) => () => handLoop(send),
    cockatiel: (send) => {
      const policy = cockatielWithTimeout();
      return () => policy.execute(() => throwIfRetryable(send));
    },
    cockatielNoTimeout: (send) => {
      const policy = cockatielNoTimeout();
      return () => policy.execute(() => throwIfRetryable(send));
    },
    pRetry: (send) => () => pRetry(() => throwIfRetryable(send), { retries: 2, minTimeout: 0 }),
    waitAlone: (send) => send,
  };
  const order: PeerId[] = [
    'handLoop',
    'cockatiel',
    'cockatielNoTimeout',
    'pRetry',
    'failwise',
    'failwiseOtel',
    'failwiseMicroClock',
  ];
  // Between waits, what the wait itself costs (the timer, and the process waking for it): every peer pays it.
  if (script === 'waited') order.unshift('waitAlone');
  const peers = order.map((id): Peer => {
    const server = sender(script);
    const run = makers[id](server.send);
    let wrong = 0;
    return {
      id,
      call: async () => {
        const result = (await run()) as Parameters<typeof statusOf>[0];
        if (statusOf(result) !== 204) wrong++;
      },
      reset: () => {
        server.reset();
        wrong = 0;
      },
      check: (calls) => {
        if (wrong > 0 || server.sends() !== calls * sendsPerCall)
          throw new Error(
            `bench: ${id} made ${server.sends()} sends for ${calls} calls (expected ${calls * sendsPerCall}), ${wrong} not a 204`,
          );
      },
    };
  });
  return {
    peers,
    close: async () => {
      await Promise.all(clients.map((client) => client.close()));
      await sdk.close();
    },
  };
}
