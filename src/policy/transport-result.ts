/**
 * What a transport reports for one attempt. It lives in the pure layer because the request machine's
 * transport actor returns it; the `Transport` interface itself is in src/transports/transport.ts.
 */

/** Where a transport-level failure happened; the classifier maps each phase to a `FailureClass`. */
export type TransportErrorPhase =
  | 'offline'
  | 'dns'
  | 'connect'
  | 'connect-timeout'
  | 'tls'
  | 'response-timeout'
  | 'connection-lost'
  | 'unknown';

export type TransportResult =
  | {
      kind: 'response';
      /** The full response; its body has been read within the attempt, so reading it again cannot fail. */
      response: Response;
      /** Attempts the transport made itself for this call, this one included (default 1). */
      attempts?: number;
    }
  | {
      kind: 'error';
      phase: TransportErrorPhase;
      /** Whether the request may have reached the server; when omitted, the phase's default applies. */
      requestSent?: 'no' | 'yes' | 'unknown';
      /** A short description with no header values, tokens, bodies or query strings. */
      message: string;
      /** The low-level code, e.g. `ECONNREFUSED` or `UND_ERR_CONNECT_TIMEOUT`. */
      code?: string;
      attempts?: number;
    };
