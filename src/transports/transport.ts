import type { TransportResult } from '../policy/transport-result.js';
import type { FetchOptions } from './fetch-options.js';

export type { TransportErrorPhase, TransportResult } from '../policy/transport-result.js';

/** One attempt, as the engine hands it to a transport. */
export interface TransportRequest {
  /** The absolute URL: the chosen origin's url joined with the request path. */
  url: string;
  method: string;
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** A replayable body: the engine may send the same bytes again on a later attempt. */
  body?: string | Uint8Array | undefined;
  /** Aborted when the attempt times out, the request is cancelled or the client closes. */
  signal: AbortSignal;
  /** How long the transport may wait for a connection before reporting `connect-timeout`. */
  connectTimeoutMs: number;
  /**
   * How many attempts this call may make in all (>= 1). A transport that retries by itself (as undici
   * may on a stale keep-alive socket) must stay within it and report what it made in `attempts`, since
   * those attempts count against `policy.attempts.max` (rule 1).
   */
  attemptsLeft: number;
  /**
   * The origin's certificate pins (`origins[].pins`): SPKI SHA-256 pins, `sha256/` + base64. When given
   * (non-empty), a transport may send only over a TLS connection whose presented chain has a certificate
   * whose public key matches one; otherwise it sends nothing and resolves with phase `tls`. Only a
   * transport with `checksPins: true` is handed pins by the client.
   */
  pins?: readonly string[] | undefined;
  /**
   * fetch's own `RequestInit` members the request carries (`client.fetch`'s init, or `fetchOptions`):
   * `fetchTransport` passes them to fetch; a transport that is not fetch ignores them.
   */
  fetchOptions?: FetchOptions | undefined;
  /**
   * Hand the response over when its headers arrive whatever its length (`bodyPlan` in buffered-response.ts
   * says when a body streams anyway: server-sent events, a body past 1 MiB).
   */
  stream?: boolean | undefined;
  /**
   * The longest wait for the next chunk of a body handed over as a stream, while the app reads it
   * (`policy.timeouts.idleMs`); then the body errors with a `TimeoutError`. No limit when left out.
   */
  idleMs?: number | undefined;
  /**
   * The caller's own signal: it also ends a body handed over as a stream, after the attempt ended (`signal`, the
   * attempt's, is not aborted once the attempt succeeded).
   */
  bodySignal?: AbortSignal | undefined;
}

/**
 * Anything that can carry one HTTP attempt. A transport never throws for a network failure: it
 * resolves with a `TransportResult` that says where the attempt failed. See docs/transports.md.
 */
export interface Transport {
  /** Shown in decision events and errors, e.g. `fetch` or `node:http`. */
  readonly name: string;
  send(request: TransportRequest): Promise<TransportResult>;
  /**
   * `true` when the transport checks `request.pins` on every connection it sends over. A client whose
   * origins have pins refuses (with `PolicyError`) a transport that does not say so: a browser's fetch
   * cannot see the server's certificates. `nodeHttpTransport` checks them; `fetchTransport` cannot.
   * @default false
   */
  readonly checksPins?: boolean;
  /** Releases pooled connections; `client.close()` calls it. */
  close?(): void | Promise<void>;
  /**
   * Drops pooled connections because the network changed (the connectivity hint `changed`): idle ones at once,
   * ones in use once their attempt ends, so no later attempt goes over a socket of the old network. Attempts in
   * flight are not cut by it. The transport stays usable. A transport without a pool leaves it out.
   */
  reset?(): void;
}
