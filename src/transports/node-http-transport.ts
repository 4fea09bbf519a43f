import * as http from 'node:http';
import * as https from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import type { Clock } from '../clock/clock.js';
import { systemClock } from '../clock/system-clock.js';
import type { TransportResult } from '../policy/transport-result.js';
import { pinSetKey } from './certificate-pins.js';
import { dropPooledSockets } from './drop-pooled-sockets.js';
import { abortedResult, errorResult } from './network-error.js';
import { NodeHttpAttempt, type AttemptContext, type AttemptTarget } from './node-http-attempt.js';
import type { Transport, TransportRequest } from './transport.js';

export interface NodeHttpTransportOptions {
  /**
   * Resolves host names instead of `dns.lookup`, e.g. to pin a host to an address or to produce a DNS
   * failure in a test without a network. Called like `dns.lookup`, including `{ all: true }`.
   */
  lookup?: LookupFunction;
  /**
   * Times the connect timeout (`request.connectTimeoutMs`) and the idle timeout of a body handed over as a
   * stream (`request.idleMs`). Pass the client's clock.
   * @default systemClock
   */
  clock?: Clock;
  /**
   * Keep connections open between attempts. The transport owns one `http.Agent` and one
   * `https.Agent`, made on first use and destroyed by `close()`.
   * @default true
   */
  keepAlive?: boolean;
  /**
   * Agents of your own instead of the transport's. `close()` leaves them alone: you own them. With
   * `origins[].pins`, make the https agent with `maxCachedSessions: 0`: a resumed TLS session shows no
   * certificates, so its pins cannot be checked and the attempt fails `tls` (`CERT_PIN_UNVERIFIABLE`).
   */
  agents?: { http?: http.Agent; https?: https.Agent };
  /**
   * TLS settings for `https:` origins. Pins (`origins[].pins`) are checked on top of these, never
   * instead: a pinned origin's certificate must still pass the CA check unless `rejectUnauthorized`
   * is `false`.
   */
  tls?: {
    /** Certificate authorities to trust instead of Node's bundled list. */
    ca?: string | Buffer | Array<string | Buffer>;
    /** @default true */
    rejectUnauthorized?: boolean;
  };
}

/**
 * A transport over `node:http` and `node:https` that follows the socket, so each failure has an exact
 * phase: `dns` (lookup failed), `connect`, `connect-timeout` (no connection, and for https no finished
 * TLS handshake, within `request.connectTimeoutMs`), `tls`, then `connection-lost` once bytes of the
 * request may have gone out (`requestSent: 'unknown'`, or `'yes'` when the response headers had
 * arrived). A body is read whole within the attempt up to 1 MiB, whatever its length header says, so a cut
 * one fails the attempt; an event stream, `stream: true` and a body past 1 MiB are handed over as a stream,
 * which `request.idleMs` bounds (docs/transports.md, "Streaming"). Node only: import it from `failwise/node`.
 *
 * When `send` resolves, its connect timer is cleared and a failed attempt's socket is destroyed; a
 * successful one goes back to the keep-alive pool, which `close()` empties. `reset()` (called by the client on
 * the connectivity hint `changed`) empties the pool without cutting attempts in flight: their sockets are
 * destroyed when they end instead of going back to it.
 *
 * It checks certificate pins (`request.pins`, from `origins[].pins`): a connection is used for a pinned
 * request only once a certificate of its presented chain matched one of the pins, before any byte of
 * the request goes out; otherwise the attempt fails with phase `tls` (`CERT_PIN_MISMATCH`) and nothing
 * is sent. Pinned requests use an https agent of their own that never resumes TLS sessions (a resumed
 * session shows no certificates to check); its kept-alive sockets were all checked.
 */
export function nodeHttpTransport(options: NodeHttpTransportOptions = {}): Transport {
  const clock = options.clock ?? systemClock;
  const keepAlive = options.keepAlive ?? true;
  let ownHttpAgent: http.Agent | undefined;
  let ownHttpsAgent: https.Agent | undefined;
  let ownPinnedAgent: https.Agent | undefined;
  // The pin set each TLS socket was checked against: a kept-alive socket is checked again for another set.
  const checkedPins = new WeakMap<Socket, string>();

  const agentFor = (isHttps: boolean, pinned: boolean): http.Agent => {
    if (isHttps) {
      if (options.agents?.https !== undefined) return options.agents.https;
      if (pinned) {
        // No session cache: every connection shows its chain, so every one is checked.
        ownPinnedAgent ??= new https.Agent({ keepAlive, maxCachedSessions: 0 });
        return ownPinnedAgent;
      }
      ownHttpsAgent ??= new https.Agent({ keepAlive });
      return ownHttpsAgent;
    }
    if (options.agents?.http !== undefined) return options.agents.http;
    ownHttpAgent ??= new http.Agent({ keepAlive });
    return ownHttpAgent;
  };

  return {
    name: 'node:http',
    checksPins: true,
    send: (request) => sendWithNodeHttp(request, { options, clock, agentFor, checkedPins }),
    close: () => {
      ownHttpAgent?.destroy();
      ownHttpsAgent?.destroy();
      ownPinnedAgent?.destroy();
      ownHttpAgent = undefined;
      ownHttpsAgent = undefined;
      ownPinnedAgent = undefined;
    },
    // The network changed: no later attempt may reuse a socket of the old one. App-given agents are emptied too
    // (their sockets are just as stale), never destroyed.
    reset: () => {
      const agents = [
        ownHttpAgent,
        ownHttpsAgent,
        ownPinnedAgent,
        options.agents?.http,
        options.agents?.https,
      ];
      for (const agent of agents) if (agent !== undefined) dropPooledSockets(agent);
    },
  };
}

function sendWithNodeHttp(request: TransportRequest, context: AttemptContext): Promise<TransportResult> {
  if (request.signal.aborted) return Promise.resolve(abortedResult());
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return Promise.resolve(errorResult('unknown', 'no', 'node:http: the request URL is not an absolute URL'));
  }
  const isHttps = url.protocol === 'https:';
  if (!isHttps && url.protocol !== 'http:') {
    return Promise.resolve(errorResult('unknown', 'no', `node:http: unsupported protocol ${url.protocol}`));
  }
  const pins = request.pins !== undefined && request.pins.length > 0 ? request.pins : undefined;
  if (pins !== undefined && !isHttps) {
    // Sending would skip the pins: there is no certificate on plain http.
    return Promise.resolve(errorResult('unknown', 'no', 'node:http: certificate pins need an https: URL'));
  }
  const target: AttemptTarget = {
    url,
    isHttps,
    host: url.host,
    pins,
    pinKey: pins === undefined ? undefined : pinSetKey(pins),
  };
  return new Promise<TransportResult>((resolve) =>
    new NodeHttpAttempt(request, target, context, resolve).start(),
  );
}
