import { FailwiseError } from './failwise-error.js';

/**
 * A bad argument given to one of failwise's functions other than the client's (a store, a clock, a
 * connectivity source, a cache): `sqliteStore: path: expected a file path (a non-empty string), got number`.
 * Thrown (or rejected with) before anything is done with it.
 */
export class ArgumentError extends FailwiseError {
  override name = 'ArgumentError';
  /** The function or method that refused it, e.g. `sqliteStore` or `memoryStore.add`. */
  readonly where: string;
  /** The argument or field at fault, e.g. `path` or `entry.idempotencyKey`. */
  readonly argument: string;

  constructor(where: string, argument: string, message: string, options?: { cause?: unknown }) {
    super(`${where}: ${argument}: ${message}`, options);
    this.where = where;
    this.argument = argument;
  }
}
