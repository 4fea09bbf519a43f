import type { Clock } from '../../src/clock/clock.js';
import type { Transport, TransportRequest, TransportResult } from '../../src/transports/transport.js';

/** One scripted reply: a result (or a hang, or a thrown error) after `latencyMs` of simulated time. */
export interface ScriptedReply {
  reply: TransportResult | 'hang' | 'throw';
  latencyMs?: number;
}

export interface ScriptedTransport extends Transport {
  /** Every request the transport was asked to send, in order. */
  readonly calls: TransportRequest[];
  /** How many calls were aborted before they answered. */
  aborted: number;
}

/** A response reply with this status, headers and text body. */
export function respond(
  status: number,
  headers: Record<string, string> = {},
  body: string | null = null,
): TransportResult {
  const nullBody = [101, 204, 205, 304].includes(status);
  return { kind: 'response', response: new Response(nullBody ? null : body, { status, headers }) };
}

export function fail(
  phase: Extract<TransportResult, { kind: 'error' }>['phase'],
  requestSent?: 'no' | 'yes' | 'unknown',
): TransportResult {
  return { kind: 'error', phase, message: `scripted ${phase}`, ...(requestSent ? { requestSent } : {}) };
}

/**
 * A transport that answers from a script on the simulated clock. After the script runs out it repeats
 * the last reply. An abort clears its timer and resolves at once, as real transports must.
 */
export function scriptedTransport(clock: Clock, script: ScriptedReply[]): ScriptedTransport {
  const calls: TransportRequest[] = [];
  const transport: ScriptedTransport = {
    name: 'scripted',
    calls,
    aborted: 0,
    send(request) {
      const step = script[Math.min(calls.length, script.length - 1)]!;
      calls.push(request);
      return new Promise<TransportResult>((resolve, reject) => {
        // eslint-disable-next-line prefer-const -- assigned after onAbort is defined, which reads it
        let timer: unknown;
        const onAbort = () => {
          if (timer !== undefined) clock.clearTimeout(timer);
          transport.aborted += 1;
          resolve({ kind: 'error', phase: 'unknown', requestSent: 'unknown', message: 'aborted' });
        };
        if (request.signal.aborted) return onAbort();
        request.signal.addEventListener('abort', onAbort, { once: true });
        if (step.reply === 'hang') return;
        const reply = step.reply;
        timer = clock.setTimeout(() => {
          request.signal.removeEventListener('abort', onAbort);
          if (reply === 'throw') reject(new Error('scripted transport crash'));
          else resolve(cloneResult(reply, request.attemptsLeft));
        }, step.latencyMs ?? 0);
      });
    },
  };
  return transport;
}

/**
 * A Response body can be read once, so every reply gets a fresh copy; a reply that claims the transport
 * retried by itself claims no more attempts than the engine allowed, as the Transport contract says.
 */
function cloneResult(result: TransportResult, attemptsLeft: number): TransportResult {
  const attempts = result.attempts === undefined ? {} : { attempts: Math.min(result.attempts, attemptsLeft) };
  return result.kind === 'response'
    ? { ...result, ...attempts, response: result.response.clone() }
    : { ...result, ...attempts };
}
