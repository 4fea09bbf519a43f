import { FailwiseError } from './failwise-error.js';

/** A malformed request given to `client.request` or `client.fetch`; the message names the field. */
export class RequestError extends FailwiseError {
  override name = 'RequestError';
  /** The request field at fault, e.g. `method` or `idempotencyKey`. */
  readonly field: string;

  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super(`request.${field}: ${message}`, options);
    this.field = field;
  }
}
