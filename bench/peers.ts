/**
 * The peers of the success and retry sections: failwise's public client next to a hand-written
 * loop, cockatiel (with and without a timeout) and p-retry, each over the same in-process sender, so
 * the figures are the cost of the retry machinery alone.
 */
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
import type { Peer } from './harness.js';
import type { PeerId } from './report.js';
import {
  checkedPeer,
  commonMakers,
  failwiseOptions,
  handLoop,
  sender,
  throwIfRetryable,
  type Script,
} from './scenarios.js';

export { handLoop, sender, type Script };

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
  const clients: FailoverClient[] = [];
  const sdk = sdkTelemetry();
  const failwise = (clock: Clock, telemetry?: typeof sdk.telemetry) => (send: () => Promise<Response>) => {
    const client = createFailoverClient({ ...failwiseOptions(send, clock), ...(telemetry && { telemetry }) });
    clients.push(client);
    return () => client.request({ path: '/x' });
  };
  const makers: Record<PeerId, (send: () => Promise<Response>) => () => Promise<unknown>> = {
    failwise: failwise(systemClock),
    failwiseMicroClock: failwise(microClock),
    failwiseOtel: failwise(systemClock, sdk.telemetry),
    ...commonMakers,
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
  const peers = order.map((id) => checkedPeer(id, script, makers[id]));
  return {
    peers,
    close: async () => {
      await Promise.all(clients.map((client) => client.close()));
      await sdk.close();
    },
  };
}
