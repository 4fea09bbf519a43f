import type { Outcome } from '../policy/outcome.js';
import type { Policy } from '../policy/policy.js';
import type { ClientOutbox } from './durable-work.js';
import type { FetchInit } from './fetch-input.js';
import type { HealthSnapshot } from './health-monitor.js';
import type { FailoverRequest } from './prepare-request.js';

export type { ClientOutbox, FetchInit };

export interface FailoverClient {
  /** The complete, frozen policy this client runs by. */
  readonly policy: Readonly<Policy>;
  /** Runs one request to its outcome. Rejects only for a malformed request (`RequestError`). */
  request(request: FailoverRequest): Promise<Outcome>;
  /**
   * A drop-in `fetch` (already bound: pass it as the `fetch` option of Apollo, urql, ky, openapi-fetch ...).
   * `input` is a path, an absolute URL (a string or a `URL`) under a configured origin, or a `Request`; `init` is
   * fetch's, plus failwise's request fields. Resolves with the final `Response` whenever the server answered (a
   * 404 or the last 503 included, as fetch does); rejects only when there is none: with the signal's `reason`
   * when the caller aborted (a `DOMException` named `AbortError` for a plain `abort()`; an `Error` of that name where
   * there is no `DOMException`, as on React Native), else with `RequestFailedError` carrying the outcome (a `deferred`
   * durable request too). A URL under no configured origin, or a malformed request, rejects with `RequestError`.
   */
  fetch(input: string | URL | Request, init?: FetchInit): Promise<Response>;
  /** The origin set's health: its state, the origin reads go to now, and since when (docs/failover.md). */
  health(): HealthSnapshot;
  /** Durable work (docs/durable.md). */
  readonly outbox: ClientOutbox;
  /**
   * Ends every request in flight (`cancelled`; durable work stays in the store), stops every timer, probe and
   * send, and closes the transport and the store. It waits for the store at most `STORE_WAIT_MS` (1 s) a
   * call, on the client's clock: a store that never answers cannot hang it.
   */
  close(): Promise<void>;
}
