import type * as z from 'zod/mini';
import type { PolicyIssue } from '../errors/policy-error.js';

/**
 * zod's issues as `PolicyIssue`s: one per bad field, the path written after `prefix`, and one issue per
 * unknown key (`policy.backof: unknown option`), with a hint where `suggest` knows the option meant.
 */
export function toPolicyIssues(
  issues: readonly z.core.$ZodIssue[],
  prefix: string,
  suggest?: (groupPath: readonly PropertyKey[], key: string) => readonly PropertyKey[] | undefined,
): PolicyIssue[] {
  return issues.flatMap((issue) => {
    if (issue.code !== 'unrecognized_keys') return [{ path: toDotPath(prefix, issue.path), message: issue.message }];
    return issue.keys.map((key) => {
      const hint = suggest?.(issue.path, key);
      return {
        path: toDotPath(prefix, [...issue.path, key]),
        message: hint === undefined ? 'unknown option' : `unknown option (did you mean ${toDotPath(prefix, hint)}?)`,
      };
    });
  });
}

/**
 * A path written by zod's `toDotPath` rules (identifiers joined with dots, indexes in brackets, other keys
 * quoted in brackets), after `prefix`.
 * @internal
 */
export function toDotPath(prefix: string, path: readonly PropertyKey[]): string {
  let out = prefix;
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'symbol') out += `[${JSON.stringify(String(segment))}]`;
    else if (/[^\w$]/.test(segment)) out += `[${JSON.stringify(segment)}]`;
    else out += out === '' ? segment : `.${segment}`;
  }
  return out;
}
