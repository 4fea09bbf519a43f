import { defaultRequestSent, failureClassOfPhase } from '../policy/classify-failure.js';
import { isClassifyVerdict, type ClassifyVerdict } from '../policy/classify-verdict.js';
import { errorNameOf } from '../policy/error-name.js';
import type { TransportResult } from '../policy/transport-result.js';
import type { ClassifyError, ClassifyHook, ClassifyRequest } from './client-options.js';

/** A transport's result with what the app's `classify` said of it (request.types.ts, `AttemptOutput`). */
export type ClassifiedResult = TransportResult & {
  verdict?: ClassifyVerdict | undefined;
  classifyError?: string | undefined;
};

/**
 * The transport's answer, then the app's `classify` asked about it, within the attempt: the attempt's timeout
 * and the request's signal cut a `classify` that never settles as they cut the transport. What `classify` throws
 * or rejects with, or a value of another kind, becomes the verdict `unexpected` with a note of what it was (only
 * an error's name, rule 9); the client itself never sees it.
 */
export function classifyAttempt(
  sent: PromiseLike<TransportResult>,
  classify: ClassifyHook,
  request: ClassifyRequest,
  attempt: number,
): PromiseLike<ClassifiedResult> {
  return sent.then((result) => {
    let said: unknown;
    try {
      said =
        result.kind === 'response'
          ? classify({ request, attempt, response: result.response })
          : classify({ request, attempt, error: errorOf(result) });
    } catch (error) {
      return threw(result, error);
    }
    if (isThenable(said))
      return Promise.resolve(said).then(
        (verdict) => withVerdict(result, verdict),
        (error: unknown) => threw(result, error),
      );
    return withVerdict(result, said);
  });
}

/** The path as `classify` sees it: without its query and fragment, which often carry secrets. */
export function classifyPath(path: string): string {
  const end = path.search(/[?#]/);
  return end < 0 ? path : path.slice(0, end);
}

function errorOf(result: Extract<TransportResult, { kind: 'error' }>): ClassifyError {
  const error: { -readonly [K in keyof ClassifyError]: ClassifyError[K] } = {
    class: failureClassOfPhase(result.phase),
    phase: result.phase,
    requestSent: result.requestSent ?? defaultRequestSent(result.phase),
    message: result.message,
  };
  if (result.code !== undefined) error.code = result.code;
  return error;
}

function withVerdict(result: TransportResult, verdict: unknown): ClassifiedResult {
  if (verdict === undefined) return result;
  if (isClassifyVerdict(verdict)) return { ...result, verdict };
  return {
    ...result,
    verdict: 'unexpected',
    classifyError: `classify returned a value of type ${typeof verdict}, not a failure class, 'success' or undefined`,
  };
}

function threw(result: TransportResult, error: unknown): ClassifiedResult {
  return { ...result, verdict: 'unexpected', classifyError: `classify threw ${errorNameOf(error)}` };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}
