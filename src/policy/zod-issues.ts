import type * as z from 'zod/mini';
import type { PolicyIssue } from '../errors/policy-error.js';

/**
 * zod's issues as `PolicyIssue`s: one per bad field, the path written after `prefix`, and one issue per
 * unknown key (`policy.backof: unknown option`).
 */
export function toPolicyIssues(issues: readonly z.core.$ZodIssue[], prefix: string): PolicyIssue[] {
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({
          path: toDotPath(prefix, [...issue.path, key]),
          message: 'unknown option',
        }))
      : [{ path: toDotPath(prefix, issue.path), message: issue.message }],
  );
}

/**
 * A path written by zod's `toDotPath` rules (identifiers joined with dots, indexes in brackets, other keys
 * quoted in brackets), after `prefix`.
 * @internal
 */
export function toDotPath(prefix: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, key) => {
    const name = String(key);
    return typeof key === 'number'
      ? `${out}[${name}]`
      : /[^\w$]/.test(name)
        ? `${out}[${JSON.stringify(name)}]`
        : out
          ? `${out}.${name}`
          : name;
  }, prefix);
}
