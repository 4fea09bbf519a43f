import type { ProbeInput, ProbeOutput } from '../../machines/origin-health/origin-health.types.js';
import type { Clock } from '../clock/clock.js';
import { failureClassOfPhase } from '../policy/classify-failure.js';
import { parseRetryAfter } from '../policy/retry-after.js';
import type { Policy } from '../policy/policy.js';
import type { Transport } from '../transports/transport.js';
import type { ProbeOption } from './client-options.js';
import type { ResolvedOrigin } from './validate-client-options.js';
import type { ServerHolds } from './server-holds.js';

/**
 * The probe the health machine invokes, from the `probe` option: the app's function, or one request sent
 * through the client's transport with no credentials and no retries. A request probe succeeds when the
 * origin answers with a status below 500 other than 429: it is up and willing to serve. Never uses any
 * request's attempts; its timeout is the machine's (`policy.health.probeTimeoutMs`), which aborts `signal`.
 * While the connectivity source says offline, no probe is sent.
 */
export function createProbe(
  option: ProbeOption | undefined,
  deps: {
    transport: Transport;
    clock: Clock;
    policy: Policy;
    originOf: (id: string) => ResolvedOrigin;
    isOffline: () => boolean;
    holds: ServerHolds;
  },
): (input: ProbeInput, signal: AbortSignal) => Promise<ProbeOutput> {
  const { transport, clock, policy, originOf, isOffline, holds } = deps;
  const probe = makeProbe(option, transport, clock, policy, originOf, holds);
  // Rule 6: nothing is sent while offline. The machine takes an `offline` probe as telling nothing.
  return (input, signal) =>
    isOffline()
      ? Promise.resolve({ ok: false, failureClass: 'offline', at: clock.now() })
      : // The origin asked for a wait: a probe is not sent before it ends, and counts as failed, since
        // the server said it is not ready; the machine's next probe comes later.
        holds.until(input.origin, clock.now()) !== undefined
        ? Promise.resolve({ ok: false, failureClass: 'unavailable', at: clock.now() })
        : // A transport that throws found the origin unfit; the answer is dated, so the machine keeps time.
          probe(input, signal).catch(() => ({
            ok: false,
            failureClass: 'unexpected' as const,
            at: clock.now(),
          }));
}

function makeProbe(
  option: ProbeOption | undefined,
  transport: Transport,
  clock: Clock,
  policy: Policy,
  originOf: (id: string) => ResolvedOrigin,
  holds: ServerHolds,
): (input: ProbeInput, signal: AbortSignal) => Promise<ProbeOutput> {
  if (typeof option === 'function') {
    return async ({ origin }, signal) => {
      const { id, url } = originOf(origin);
      let ok = false;
      try {
        ok = (await option({ id, url }, signal)) === true;
      } catch {
        // A probe that throws found the origin unfit.
      }
      return { ok, at: clock.now() };
    };
  }
  const method = option?.method ?? 'HEAD';
  const path = option?.path ?? '/';
  return async ({ origin }, signal) => {
    const { base, pins } = originOf(origin);
    // The probe checks the origin's pins too: a primary that answers with the wrong certificate is not fit.
    const result = await transport.send({
      url: base + path,
      method,
      headers: {},
      signal,
      connectTimeoutMs: Math.min(policy.timeouts.connectMs, policy.health.probeTimeoutMs),
      attemptsLeft: 1,
      pins,
    });
    const at = clock.now();
    if (result.kind === 'error') return { ok: false, failureClass: failureClassOfPhase(result.phase), at };
    const { status } = result.response;
    // A probe told to wait (429/503 with Retry-After) holds the origin like any attempt: no probe
    // and no attempt goes to it before then, however soon the health machine's next probe would come.
    const retryAfterMs = parseRetryAfter(result.response.headers.get('retry-after'), at);
    if (retryAfterMs !== undefined)
      holds.note(
        {
          class: status === 429 ? 'rate-limited' : 'unavailable',
          requestSent: 'yes',
          origin,
          status,
          retryAfterMs,
          message: `probe answered ${status}`,
        },
        at,
      );
    return { ok: status < 500 && status !== 429, at };
  };
}
