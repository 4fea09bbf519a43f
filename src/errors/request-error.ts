import { FailwiseError } from './failwise-error.js';

/** A malformed request given to `client.request` or `client.fetch`; the message names the field. */
export class RequestError extends FailwiseError {
  override name = 'RequestError';
  /** The request field at fault, e.g. `method`, `idempotencyKey` or `headers["x-a b"]`; `''` for the request itself. */
  readonly field: string;

  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super(`${field === '' ? 'request' : `request.${field}`}: ${message}`, options);
    this.field = field;
  }
}
