import { FailwiseError } from './failwise-error.js';

/**
 * A machine run in a way it cannot be: an actor it needs was not provided, an executor was given a machine it
 * does not know, or an actor's error that no transition handles. The message names the machine and the actor
 * or event. Requests never end this way on their own: it means the machines were wired up wrongly.
 */
export class MachineError extends FailwiseError {
  override name = 'MachineError';
}
