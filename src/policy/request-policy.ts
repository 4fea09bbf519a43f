import { PolicyError, type PolicyIssue } from '../errors/policy-error.js';
import { definePolicy } from './define-policy.js';
import { defaultPolicy } from './defaults.js';
import { isRecord } from './is-record.js';
import type { Policy, PolicyInput } from './policy.js';
import { describeValue } from './schema.js';
import { toDotPath } from './zod-issues.js';

/** The parts of a policy that belong to one call: a route or a request may set them for itself. */
export const REQUEST_POLICY_FIELDS = [
  'attempts',
  'budgetMs',
  'timeouts',
  'backoff',
  'retryableStatuses',
  'retryAfter',
] as const;

/**
 * A route's or a request's own policy: any part of `attempts`, `budgetMs`, `timeouts`, `backoff`,
 * `retryableStatuses` and `retryAfter`, laid over the client's policy for that call. The rest of the policy
 * (`health`, `retryBudget`, `durable`, ...) belongs to the client: every request shares it.
 */
export type RequestPolicyInput = Pick<PolicyInput, (typeof REQUEST_POLICY_FIELDS)[number]>;

const requestFields: ReadonlySet<string> = new Set(REQUEST_POLICY_FIELDS);

/** The client's own parts of a policy, refused by name in a route's or a request's policy. */
export const CLIENT_WIDE_FIELDS: readonly string[] = Object.keys(defaultPolicy).filter(
  (key) => !requestFields.has(key),
);

const clientWide: ReadonlySet<string> = new Set(CLIENT_WIDE_FIELDS);

/**
 * `input` (a route's or a request's policy) laid over `base`, a complete policy: what it sets replaces `base`'s,
 * field by field, with the same rules and messages as `definePolicy` (a duration it leaves out shrinks to fit
 * a limit it sets). A client-wide field is refused by name. Frozen, like every policy.
 *
 * @throws PolicyError naming each bad field after `path` (`request.policy.attempts.max: expected ...`).
 */
export function layPolicy(base: Readonly<Policy>, input: unknown, path: string): Readonly<Policy> {
  if (!isRecord(input))
    throw new PolicyError([{ path, message: `expected an object, got ${describeValue(input)}` }]);
  const issues: PolicyIssue[] = [];
  let own: Record<string, unknown> = input;
  for (const key of Object.keys(input)) {
    if (!clientWide.has(key)) continue;
    issues.push({
      path: toDotPath(path, [key]),
      message: "client-wide: every request shares it, so only the client's policy sets it",
    });
    if (own === input) own = { ...input };
    delete own[key];
  }
  let policy: Readonly<Policy> | undefined;
  try {
    policy = definePolicy(own, { path, base });
  } catch (error) {
    if (!(error instanceof PolicyError)) throw error;
    issues.push(...error.issues);
  }
  if (issues.length > 0) throw new PolicyError(issues);
  return policy!;
}
