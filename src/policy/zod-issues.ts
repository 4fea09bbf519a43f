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
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => {
          const hint = suggest?.(issue.path, key);
          return {
            path: toDotPath(prefix, [...issue.path, key]),
            message: `unknown option${hint ? ` (did you mean ${toDotPath(prefix, hint)}?)` : ''}`,
          };
        })
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
