import { FailwiseError } from './failwise-error.js';
import { PolicyError } from './policy-error.js';
import { RequestError } from './request-error.js';
import { RequestFailedError } from './request-failed-error.js';

/*
 * Each guard accepts an instance of the class, or any error carrying the class's `name`: an error made by
 * another copy of failwise (two bundles, an iframe, a worker) fails `instanceof` but is still ours (like ky's
 * `source/utils/type-guards.ts`). The names are string literals, not `cls.name`, which minifiers rename.
 */

/** A guard for `cls`, also accepting an object whose `name` is one of `names`. */
const guard =
  <T>(cls: abstract new (...args: never[]) => T, ...names: string[]) =>
  (error: unknown): error is T =>
    error instanceof cls ||
    (typeof error === 'object' &&
      error !== null &&
      names.includes((error as { name?: unknown }).name as string));

/** Whether `error` is any error failwise throws (or rejects with). */
export const isFailwiseError = guard(
  FailwiseError,
  'FailwiseError',
  'PolicyError',
  'RequestError',
  'RequestFailedError',
  'ArgumentError',
  'StateError',
  'MachineError',
  'UnhandledActorError',
);

/** Whether `error` is a `PolicyError`: an invalid policy or client option. */
export const isPolicyError = guard(PolicyError, 'PolicyError');

/** Whether `error` is a `RequestError`: a malformed request given to `client.request` or `client.fetch`. */
export const isRequestError = guard(RequestError, 'RequestError');

/** Whether `error` is a `RequestFailedError`: `client.fetch`'s rejection, carrying the whole `Outcome`. */
export const isRequestFailedError = guard(RequestFailedError, 'RequestFailedError');
