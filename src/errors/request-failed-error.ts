import type { Outcome } from '../policy/outcome.js';
import { FailwiseError } from './failwise-error.js';

/**
 * The rejection of `client.fetch` when the outcome is not `succeeded`. `outcome` holds the whole story
 * (reason, last failure, last response); a deferred durable write rejects too, with `status: 'deferred'`.
 */
export class RequestFailedError extends FailwiseError {
  override name = 'RequestFailedError';
  readonly outcome: Exclude<Outcome, { status: 'succeeded' }>;

  constructor(outcome: Exclude<Outcome, { status: 'succeeded' }>) {
    super(
      outcome.status === 'deferred'
        ? `request deferred (${outcome.reason}) as outbox entry ${outcome.entryId}`
        : `request failed: ${outcome.reason}${outcome.failure ? ` (${outcome.failure.class}: ${outcome.failure.message})` : ''}`,
    );
    this.outcome = outcome;
  }
}
