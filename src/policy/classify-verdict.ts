import { defaultRequestSent, type ClassifyOptions } from './classify-failure.js';
import { FAILURE_CLASSES, type Failure, type FailureClass } from './failure.js';
import { parseRetryAfter } from './retry-after.js';
import type { TransportResult } from './transport-result.js';

/** What the client's `classify` may say of an attempt: a failure class, or `'success'`. */
export type ClassifyVerdict = FailureClass | 'success';

const verdicts: ReadonlySet<unknown> = new Set<ClassifyVerdict>(['success', ...FAILURE_CLASSES]);

/** Whether `value` is something `classify` may return besides `undefined`. */
export function isClassifyVerdict(value: unknown): value is ClassifyVerdict {
  return verdicts.has(value);
}

/**
 * What one attempt means once the app's `classify` has spoken: `undefined` for a success, else the `Failure`.
 *
 * `'success'` makes any response or error a success. A class makes the attempt a failure of that class, marked
 * `classifiedByApp` (the class alone then decides whether it is retried, whatever the status). Whether the
 * request was sent stays what the transport said (a response: `yes`), so a write the app calls a retryable
 * failure is still unsafe to replay (rule 2). `classifyError` says what went wrong in `classify` (it threw, or
 * returned something else): the attempt then fails as `unexpected`, decided as failwise decides one.
 */
export function classifyWithVerdict(
  result: TransportResult,
  verdict: ClassifyVerdict,
  origin: string,
  options: ClassifyOptions,
  classifyError?: string,
): Failure | undefined {
  if (verdict === 'success') return undefined;
  const why = classifyError ?? `classified ${verdict} by the app's classify`;
  if (result.kind === 'error') {
    const failure: Failure = {
      class: verdict,
      requestSent: result.requestSent ?? defaultRequestSent(result.phase),
      origin,
      message: `${result.message} (${why})`,
    };
    if (classifyError === undefined) failure.classifiedByApp = true;
    return failure;
  }
  const { status, statusText, headers } = result.response;
  const failure: Failure = {
    class: verdict,
    requestSent: 'yes',
    origin,
    status,
    message: `${`HTTP ${status} ${statusText.trim()}`.trim()} (${why})`,
  };
  const retryAfterMs = parseRetryAfter(headers.get('retry-after'), options.now);
  if (retryAfterMs !== undefined) failure.retryAfterMs = retryAfterMs;
  if (classifyError === undefined) failure.classifiedByApp = true;
  return failure;
}
