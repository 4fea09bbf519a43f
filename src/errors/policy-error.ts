import { FailwiseError } from './failwise-error.js';

/**
 * One problem with a policy or client option.
 *
 * @example `{ path: 'policy.backoff.initialMs', message: 'expected a number >= 0, got -1' }`
 */
export interface PolicyIssue {
  /** Where the bad value is, written by zod's `toDotPath` rules: `policy.retryableStatuses[1]`. */
  path: string;
  /** What was expected and what was given, without the path. */
  message: string;
}

/**
 * An invalid policy or client option, thrown synchronously by `definePolicy` and `createFailoverClient`.
 * It lists every bad field at once, one line per issue:
 *
 * ```text
 * policy.backoff.initialMs: expected a number >= 0, got -1
 * policy.timeouts.attemptMs: must not exceed policy.budgetMs (10000), got 20000
 * ```
 */
export class PolicyError extends FailwiseError {
  override name = 'PolicyError';
  /** Every problem found, in the order of the message's lines. */
  readonly issues: readonly PolicyIssue[];

  constructor(issues: readonly PolicyIssue[], options?: { cause?: unknown }) {
    super(issues.map(({ path, message }) => (path ? `${path}: ${message}` : message)).join('\n'), options);
    this.issues = Object.freeze(issues.map(({ path, message }) => Object.freeze({ path, message })));
  }
}
