// Apart from schema.ts so that a check outside the policy (a connectivity source) can word its message the same
// way without pulling zod into a bundle.

/**
 * A value as shown in a message: numbers as written, strings quoted and cut at 40 characters, anything else by
 * its kind. Policy values are not secrets, but a message should stay one short line.
 * @internal
 */
export function describeValue(value: unknown): string {
  const type = typeof value;
  return type === 'string'
    ? JSON.stringify((value as string).length > 40 ? `${(value as string).slice(0, 40)}…` : value)
    : type === 'function' || type === 'symbol'
      ? `a ${type}`
      : type === 'object' && value !== null
        ? Array.isArray(value)
          ? 'an array'
          : 'an object'
        : Object.is(value, -0)
          ? '-0'
          : String(value) + (type === 'bigint' ? 'n' : '');
}
