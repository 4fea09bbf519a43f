import { errorNameOf } from '../policy/error-name.js';
import { FailwiseError } from './failwise-error.js';

/**
 * What an inspected client's machines see when an effect (a transport, a store, an app's hook) rejects: an error
 * with the same name and nothing else. The inspector shows every event a machine gets, and the original's
 * message, cause and fields may quote a URL, a header value or a stored row (rule 9). The machines read
 * only the name (`transport threw TypeError instead of reporting a result`).
 */
export class WithheldError extends FailwiseError {
  constructor(thrown: unknown) {
    const name = errorNameOf(thrown);
    super(`${name}: its message and fields are withheld from the machines (docs/rules.md, rule 9)`);
    // The machines (and so the inspector) name the error as the lean executor does: by the original's name.
    this.name = name;
  }
}
