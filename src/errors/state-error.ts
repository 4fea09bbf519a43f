import { FailwiseError } from './failwise-error.js';

/**
 * A call that cannot be served in the state its object is in: a closed client, store or outbox, a simulated
 * clock asked to go back in time. The message names the object and the call.
 */
export class StateError extends FailwiseError {
  override name = 'StateError';
}
