import type { Clock } from '../clock/clock.js';
import type { TransportResult } from '../policy/transport-result.js';
import { systemClock } from '../clock/system-clock.js';
import {
  bodyPlan,
  bufferedResponse,
  isRepresentableStatus,
  type ResponseFromBytes,
} from './buffered-response.js';
import { takeFetchBody, type TakenBody } from './fetch-body.js';
import { abortedResult, describeOpaque, errorResult, hostOf } from './network-error.js';
import type { Transport } from './transport.js';

export interface FetchTransportOptions {
  /**
   * The fetch to call. Read at each send, so a polyfill or test stub installed later is used.
   * @default globalThis.fetch
   */
  fetch?: typeof globalThis.fetch;
  /**
   * Times the idle timeout of a body handed over as a stream (`request.idleMs`). The client's default
   * transport is given the client's clock; pass yours the same. Nothing else here sets a timer: the
   * engine's attempt timeout aborts `request.signal`.
   * @default systemClock
   */
  clock?: Clock;
  /**
   * Turns a rejected fetch (or body read) into a result. The `failwise` entry for Node passes one that
   * reads undici's `cause.code` (src/transports/undici-fetch-errors.ts); elsewhere errors are opaque.
   * @default explainOpaqueFetchError
   */
  explainError?: (error: unknown, host: string, readingBody: boolean) => TransportResult;
}

/**
 * A transport over WHATWG `fetch`: browsers, React Native, Node >= 20, Deno and Bun.
 *
 * @remarks
 * It reads a body of up to 1 MiB, whatever its length header says, within the attempt and resolves with a
 * fresh `Response` over those bytes, so a body cut mid-way is a `connection-lost` failure of this attempt, not
 * a rejection later in app code (a response with no body is fetch's own: nothing to read). An event stream,
 * any body with `stream: true`, and a body past 1 MiB are handed over as a stream, which `request.idleMs`
 * bounds (docs/transports.md, "Streaming"). It never rejects for a network failure: each resolves as
 * `{ kind: 'error', phase, requestSent }`; an error in failwise's own code rejects (the engine's transport crash).
 * React Native's fetch gives no stream, so there every body is read within the attempt (docs/transports.md,
 * "Streaming on React Native").
 * Node's fetch (undici) names the cause with a `code`; the mapping is in docs/transports.md. A
 * browser's opaque `TypeError: Failed to fetch` becomes phase `unknown` with `requestSent: 'unknown'`.
 *
 * fetch cannot set undici's connect timeout without a dispatcher, so this transport reports
 * `connect-timeout` only when undici does (after its default of 10 s); otherwise the engine's attempt
 * timeout ends the attempt. `request.connectTimeoutMs` is honoured by `nodeHttpTransport`.
 *
 * fetch shows no certificates, so this transport cannot check pins (`origins[].pins`): it does not say
 * `checksPins`, a client with pins refuses it, and a request handed to it with pins is not sent.
 */
export function fetchTransport(options: FetchTransportOptions = {}): Transport {
  return fetchTransportWith(options, undefined);
}

/**
 * @internal
 * `fetchTransport` that makes the `Response` over a body it read with `responseFromBytes` (the Node entry's:
 * src/transports/bytes-response.ts) rather than `new Response`.
 */
export function fetchTransportWith(
  options: FetchTransportOptions,
  responseFromBytes: ResponseFromBytes | undefined,
): Transport {
  return {
    name: 'fetch',
    send: async ({ url, method, headers, body, signal, pins, fetchOptions, stream, bodySignal, idleMs }) => {
      if (signal.aborted) return abortedResult();
      if (pins !== undefined && pins.length > 0) {
        // Sending would skip the pins the caller asked for.
        return errorResult('unknown', 'no', 'fetch: cannot check certificate pins; use nodeHttpTransport');
      }
      const fetchFn = options.fetch ?? globalThis.fetch;
      if (typeof fetchFn !== 'function') {
        return errorResult(
          'unknown',
          'no',
          'fetch: no fetch function in this runtime; pass fetchTransport({ fetch })',
        );
      }
      // Only the fetch call and the body read are the network's (each in its own try): an error thrown anywhere
      // else is failwise's own, and rejects, which the engine records as an `unexpected` transport crash.
      // An undefined body is the same as none (WebIDL).
      // fetch's own members the request carries (credentials, mode, ...) first: failwise's own win over them.
      const init: RequestInit = { method, headers, signal, body: body as BodyInit };
      let response: Response;
      try {
        // Called on globalThis: a browser's fetch throws "Illegal invocation" when called on another object.
        response = await fetchFn.call(
          globalThis,
          url,
          fetchOptions ? Object.assign({}, fetchOptions, init) : init,
        );
      } catch (error) {
        return explainFailure(options, error, url, signal, false);
      }
      const { status } = response;
      if (!isRepresentableStatus(status)) {
        // Its body is read all the same (one cut mid-way is a lost connection); then the status is refused.
        try {
          await response.arrayBuffer();
        } catch (error) {
          return explainFailure(options, error, url, signal, true);
        }
        return errorResult(
          'unknown',
          'yes',
          `fetch: ${hostOf(url)} answered with status ${status}, which a Response cannot hold`,
        );
      }
      // A response without a body (a 204, a HEAD's) has nothing to lose mid-way: fetch's own is handed over as
      // it is (its url and redirected set), with no read to wait for and no copy of its headers (about 10 µs).
      if (response.body === null) return { kind: 'response', response };
      // failwise's own reading of the headers: outside the network's try, so a fault there is not the origin's.
      const plan = bodyPlan(method, status, response.headers, stream);
      const streamed: unknown = response.body;
      if (!isReadableStream(streamed)) {
        // No stream (whatwg-fetch on React Native, whose `body` is undefined): fetch resolved once it held the
        // whole body, so nothing is left to cut or wait for: a stream is fetch's own response, any other body is
        // read here, within the attempt.
        if (plan === 'stream') return { kind: 'response', response };
        let whole: Blob | ArrayBuffer;
        try {
          whole = await readWhole(response);
        } catch (error) {
          return explainFailure(options, error, url, signal, true);
        }
        return { kind: 'response', response: responseOver(method, response, whole) };
      }
      let taken: TakenBody;
      try {
        taken = await takeFetchBody(response, streamed, plan, {
          idleMs,
          clock: options.clock ?? systemClock,
          signal: bodySignal,
          host: () => hostOf(url),
        });
      } catch (error) {
        return explainFailure(options, error, url, signal, true);
      }
      // A stream is handed over once its headers are here, or once the body went past the cap.
      if (taken.response !== undefined) return { kind: 'response', response: taken.response };
      return {
        kind: 'response',
        response: bufferedResponse(
          method,
          status,
          response.statusText,
          response.headers,
          taken.bytes,
          responseFromBytes,
        ),
      };
    },
  };
}

/** A rejected fetch or body read as a result; whatever it was, once the attempt's signal fired it is that. */
function explainFailure(
  options: FetchTransportOptions,
  error: unknown,
  url: string,
  signal: AbortSignal,
  readingBody: boolean,
): TransportResult {
  if (signal.aborted) return abortedResult();
  // The host is parsed from the url only for a message: not on every send.
  const explainError = options.explainError ?? explainOpaqueFetchError;
  return explainError(error, hostOf(url), readingBody);
}

/** Whether `body` is a WHATWG `ReadableStream` (by shape: the runtime may have none of its own to compare with). */
function isReadableStream(body: unknown): body is ReadableStream<Uint8Array> {
  return (
    typeof body === 'object' && body !== null && typeof (body as ReadableStream).getReader === 'function'
  );
}

/**
 * The whole body of a response whose fetch gives no stream: a `Blob` where the runtime has one, since whatwg-fetch's
 * `text()` decodes a Blob as UTF-8 but bytes one byte a character, so a response over bytes would garble text.
 */
function readWhole(response: Response): Promise<Blob | ArrayBuffer> {
  return typeof Blob === 'function' && typeof response.blob === 'function'
    ? response.blob()
    : response.arrayBuffer();
}

/** A new response over the body `readWhole` read (none for a 204, a HEAD's or an empty one). */
function responseOver(method: string, response: Response, whole: Blob | ArrayBuffer): Response {
  const { status, statusText, headers } = response;
  if (whole instanceof ArrayBuffer) return bufferedResponse(method, status, statusText, headers, whole);
  return new Response(whole.size === 0 ? null : whole, { status, statusText, headers });
}

/**
 * Where a fetch failed. Before any response headers, each branch is what undici in Node 20 was seen
 * to report (see docs/transports.md, "fetchTransport on Node"). While reading the body the headers
 * had arrived, so the server got the request (`requestSent: 'yes'`).
 */

/**
 * What a fetch failure means when the runtime tells nothing more, as browsers and React Native do (an
 * opaque `TypeError: Failed to fetch` for DNS, refusal, CORS and a cut connection alike): the request may
 * have been sent, so a write is treated as possibly applied (rule 2). A failure while reading the body
 * comes after the server answered: `connection-lost`, sent `yes`.
 */
export function explainOpaqueFetchError(error: unknown, host: string, readingBody: boolean): TransportResult {
  return readingBody
    ? errorResult(
        'connection-lost',
        'yes',
        `${describeOpaque(error)}: connection to ${host} lost while reading the response body`,
      )
    : errorResult('unknown', 'unknown', `fetch to ${host} failed: ${describeOpaque(error)}`);
}
