import type { ProbeInput, ProbeOutput } from '../../machines/origin-health/origin-health.types.js';
import { FailwiseError } from '../errors/failwise-error.js';

type Probe = (input: ProbeInput, signal: AbortSignal) => Promise<ProbeOutput>;

export interface ProbeAcrossChange {
  /** The probe the health machine invokes. */
  probe: Probe;
  /** The network changed: a probe in flight is sent again at once. */
  changed(): void;
}

/**
 * Wraps the health machine's probe so that a probe in flight when the network changes (the hint `changed`) is
 * ended and sent again at once on the new network, as a read is: its socket belonged to the old network, and
 * its failure would say nothing about the primary. The machine's probe timeout, armed when it started the
 * probe, still bounds both sends; the answer it gets is the second one's.
 */
export function probeAcrossChange(probe: Probe): ProbeAcrossChange {
  const inFlight = new Set<() => void>();
  return {
    probe: (input, signal) =>
      new Promise<ProbeOutput>((resolve, reject) => {
        let current: AbortController | undefined;
        const send = () => {
          current?.abort();
          const mine = new AbortController();
          current = mine;
          probe(input, mine.signal).then(
            (output) => current === mine && end(() => resolve(output)),
            (error: unknown) =>
              current === mine &&
              end(() =>
                reject(
                  error instanceof Error
                    ? error
                    : new FailwiseError('failwise: the probe failed', { cause: error }),
                ),
              ),
          );
        };
        // The machine let go of the probe (its timeout, or stop): no change may send it again.
        const stop = () => {
          inFlight.delete(send);
          current?.abort();
        };
        const end = (settle: () => void) => {
          inFlight.delete(send);
          signal.removeEventListener('abort', stop);
          settle();
        };
        if (signal.aborted)
          return reject(new FailwiseError('failwise: the probe was aborted before it was sent'));
        signal.addEventListener('abort', stop, { once: true });
        inFlight.add(send);
        send();
      }),
    changed() {
      for (const resend of [...inFlight]) resend();
    },
  };
}
