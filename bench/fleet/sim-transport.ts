import type { Clock } from '../../src/clock/clock.js';
import type { Transport, TransportResult } from '../../src/transports/transport.js';
import type { FleetWorld } from './fleet-world.js';

/**
 * One client's transport into the simulated world: the origin decides the answer when the request arrives, and
 * the client gets it after the latency, on the fleet's clock. An abort (attempt timeout, budget, cancel) ends
 * the call at once, as real transports do.
 */
export function simTransport(world: Pick<FleetWorld, 'answer'>, clock: Clock): Transport {
  return {
    name: 'fleet-sim',
    send(request) {
      const { result, latencyMs } = world.answer(request, clock.now());
      return new Promise<TransportResult>((resolve) => {
        const onAbort = () => {
          clock.clearTimeout(timer);
          resolve({ kind: 'error', phase: 'unknown', requestSent: 'unknown', message: 'aborted' });
        };
        const timer = clock.setTimeout(() => {
          request.signal.removeEventListener('abort', onAbort);
          resolve(result);
        }, latencyMs);
        request.signal.addEventListener('abort', onAbort, { once: true });
      });
    },
  };
}
