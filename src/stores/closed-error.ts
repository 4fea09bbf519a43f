import { FailwiseError } from '../errors/failwise-error.js';

/**
 * The rejection of every store call made after `close()`. A module of its own: the client says it for an
 * outbox it never loaded, without bundling the stores' input checks up front.
 * @internal
 */
export const closedError = (who: string): FailwiseError =>
  new FailwiseError(`${who}: the store is closed; open a new one to use it again`);
