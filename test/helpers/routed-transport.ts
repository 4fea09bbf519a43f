import type { Clock } from '../../src/clock/clock.js';
import type { Transport, TransportRequest, TransportResult } from '../../src/transports/transport.js';

/** One call the transport got: when it was sent, to which url, and when (if) it answered. */
export interface RoutedCall {
  request: TransportRequest;
  sentAt: number;
  answeredAt?: number;
  /** What it answered (absent while in flight, or when aborted first). */
  result?: TransportResult;
}

export interface RoutedTransport extends Transport {
  readonly calls: RoutedCall[];
}

/**
 * A transport whose every answer is decided when the call is sent, by `answer(request, now)`: a result after
 * `latencyMs` of the clock's time. An abort resolves at once, as real transports must.
 */
export function routedTransport(
  clock: Clock,
  answer: (request: TransportRequest, now: number) => { result: TransportResult; latencyMs: number },
): RoutedTransport {
  const calls: RoutedCall[] = [];
  return {
    name: 'routed',
    calls,
    send(request) {
      const call: RoutedCall = { request, sentAt: clock.now() };
      calls.push(call);
      const { result, latencyMs } = answer(request, clock.now());
      return new Promise<TransportResult>((resolve) => {
        const onAbort = () => {
          clock.clearTimeout(timer);
          resolve({ kind: 'error', phase: 'unknown', requestSent: 'unknown', message: 'aborted' });
        };
        const timer = clock.setTimeout(() => {
          request.signal.removeEventListener('abort', onAbort);
          call.answeredAt = clock.now();
          call.result = result;
          resolve(
            result.kind === 'response' ? { ...result, response: result.response.clone() } : { ...result },
          );
        }, latencyMs);
        if (request.signal.aborted) onAbort();
        else request.signal.addEventListener('abort', onAbort, { once: true });
      });
    },
  };
}
