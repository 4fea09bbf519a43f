/**
 * Which answers of an origin have their rate-limit fields read. Reading them is three header lookups per answer
 * (`RateLimit`, `RateLimit-Remaining`, `X-RateLimit-Remaining`), or on React Native's fetch (whatwg-fetch) one
 * pass over the answer's fields (rate-limit-fields.ts): a cost on every answer read. An origin that names its
 * quota does so on every answer, or at least on its throttles, so every answer is read until the origin has
 * given `FIRST_ANSWERS` answers without a field; from then on its 429s and 503s are read, and one answer in
 * `READ_EVERY` besides, until one carries a field again.
 */

/** The answers read in full before an origin that sends no field is read only now and then. */
export const FIRST_ANSWERS = 16;
/** Past the first answers, one answer in this many is read (besides every 429 and 503). */
export const READ_EVERY = 16;

/**
 * Whether to read the fields of an answer with `status` from an origin whose last `answersWithoutFields`
 * answers had none (counted since the last answer that had one, read or not).
 */
export function readsRateLimitFields(answersWithoutFields: number, status: number): boolean {
  return (
    answersWithoutFields < FIRST_ANSWERS ||
    status === 429 ||
    status === 503 ||
    answersWithoutFields % READ_EVERY === 0
  );
}
