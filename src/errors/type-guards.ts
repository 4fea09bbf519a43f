import { FailwiseError } from './failwise-error.js';
import { PolicyError } from './policy-error.js';
import { RequestError } from './request-error.js';
import { RequestFailedError } from './request-failed-error.js';

/*
 * Each guard accepts an instance of the class, or any error carrying the class's `name`: an error made by
 * another copy of failwise (two bundles, an iframe, a worker) fails `instanceof` but is still ours (like ky's
 * `source/utils/type-guards.ts`). The names are string literals, not `cls.name`, which minifiers rename.
 */

const failwiseErrorNames: ReadonlySet<string> = new Set([
  'FailwiseError',
  'PolicyError',
  'RequestError',
  'RequestFailedError',
]);

function nameOf(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? (value as { name?: unknown }).name : undefined;
}

/** Whether `error` is any error failwise throws (or rejects with). */
export function isFailwiseError(error: unknown): error is FailwiseError {
  if (error instanceof FailwiseError) return true;
  const name = nameOf(error);
  return typeof name === 'string' && failwiseErrorNames.has(name);
}

/** Whether `error` is a `PolicyError`: an invalid policy or client option. */
export function isPolicyError(error: unknown): error is PolicyError {
  return error instanceof PolicyError || nameOf(error) === 'PolicyError';
}

/** Whether `error` is a `RequestError`: a malformed request given to `client.request` or `client.fetch`. */
export function isRequestError(error: unknown): error is RequestError {
  return error instanceof RequestError || nameOf(error) === 'RequestError';
}

/** Whether `error` is a `RequestFailedError`: `client.fetch`'s rejection, carrying the whole `Outcome`. */
export function isRequestFailedError(error: unknown): error is RequestFailedError {
  return error instanceof RequestFailedError || nameOf(error) === 'RequestFailedError';
}
