/** A plain object (not null, not an array): what option and entry checks descend into. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
