/**
 * @internal
 * The body of a response handed over as a stream once the attempt has ended (docs/transports.md, "Streaming"):
 * the bytes the transport already read, then the rest as the app reads it. Nothing of the attempt bounds it any
 * more, so two things do here: the wait for each next chunk (`idleMs`, timed on the injected clock) and the caller's
 * own signal. Either ends it as an error of the body (a reader's `read()`, `text()`, `json()` reject) and cancels
 * the source, which closes its connection.
 *
 * Only built over a real `ReadableStream` source: where fetch gives none (React Native's whatwg-fetch), the
 * transport never calls this.
 */
import type { Clock } from '../clock/clock.js';
import { FailwiseError } from '../errors/failwise-error.js';

export interface HandOverOptions {
  /** The longest wait for the next chunk while the app reads (`policy.timeouts.idleMs`); no limit when undefined. */
  idleMs: number | undefined;
  /** Times `idleMs`. */
  clock: Clock;
  /** The caller's own signal: aborting it errors the body with the signal's reason, as fetch's body would. */
  signal: AbortSignal | undefined;
  /** The origin's `host:port`, named in the idle error; called only then. */
  host: () => string;
}

/**
 * A stream of `read` (the bytes read within the attempt, in order) followed by what `source` yields. It pulls from
 * `source` only when the app asks for a chunk (high-water mark 0), so the idle timer runs only while the app waits
 * on the server, never while a slow app has not asked yet.
 */
export function handedOverBody(
  source: ReadableStreamDefaultReader<Uint8Array>,
  read: readonly Uint8Array[],
  options: HandOverOptions,
): ReadableStream<Uint8Array> {
  const { idleMs, clock, signal } = options;
  let timer: unknown;
  let ended = false;
  let output: ReadableStreamDefaultController<Uint8Array> | undefined;

  const stopTimer = (): void => {
    if (timer !== undefined) clock.clearTimeout(timer);
    timer = undefined;
  };
  const end = (): void => {
    ended = true;
    stopTimer();
    signal?.removeEventListener('abort', onAbort);
  };
  /** Errors the body and lets go of the source (a pending read of it then ends, ignored). */
  const fail = (reason: unknown): void => {
    if (ended) return;
    end();
    output?.error(reason);
    source.cancel(reason).catch(() => undefined);
  };
  function onAbort(): void {
    fail(abortReason(signal!));
  }

  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        output = controller;
        for (const chunk of read) controller.enqueue(chunk);
        if (signal?.aborted) fail(abortReason(signal));
        else signal?.addEventListener('abort', onAbort, { once: true });
      },
      pull(controller) {
        if (idleMs !== undefined) {
          timer = clock.setTimeout(() => {
            timer = undefined;
            fail(idleTimeoutError(options.host(), idleMs));
          }, idleMs);
        }
        return source.read().then(
          ({ done, value }) => {
            if (ended) return;
            stopTimer();
            if (done) {
              end();
              controller.close();
            } else {
              controller.enqueue(value);
            }
          },
          (error: unknown) => fail(error),
        );
      },
      cancel(reason) {
        end();
        return source.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/** What a body ends with when the caller aborts: the signal's reason, as fetch gives it. */
function abortReason(signal: AbortSignal): unknown {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : namedError('This operation was aborted', 'AbortError');
}

/** What a body ends with when no chunk came within `idleMs`: a `TimeoutError`, as `AbortSignal.timeout()` gives. */
function idleTimeoutError(host: string, idleMs: number): Error {
  return namedError(
    `no data from ${host} for ${idleMs} ms while reading the response body (timeouts.idleMs)`,
    'TimeoutError',
  );
}

/** A `DOMException` of that name, as fetch's own errors are; where the host has none, a `FailwiseError` so named. */
function namedError(message: string, name: string): Error {
  return typeof DOMException === 'function'
    ? new DOMException(message, name)
    : Object.assign(new FailwiseError(message), { name });
}
