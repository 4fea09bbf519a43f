import { RequestError } from '../errors/request-error.js';
import { KEY } from './prepare-request.js';

/**
 * The client's key maker: the app's `generateIdempotencyKey`, else `crypto.randomUUID`, looked up when a key is
 * first needed (an `'auto'` key, a durable request), never when the client is made: a client on a runtime
 * without it (React Native's Hermes) works until it needs a key, and then says which option to give. `field`
 * is the request field that needed the key, so that the `RequestError` names it.
 */
export function keyGenerator(given: (() => string) | undefined): (field: string) => string {
  return (field) => {
    let key: unknown;
    try {
      key = given
        ? given()
        : (globalThis as { crypto?: { randomUUID?: () => string } }).crypto?.randomUUID?.();
    } catch (cause) {
      throw new RequestError(field, 'generateIdempotencyKey threw', { cause });
    }
    if (typeof key !== 'string' || !KEY.test(key))
      throw new RequestError(
        field,
        given
          ? 'generateIdempotencyKey returned no key (a non-empty string of printable ASCII)'
          : 'no crypto.randomUUID here (React Native: Hermes) to make a key: pass generateIdempotencyKey to createFailoverClient',
      );
    return key;
  };
}

/**
 * A name for this client on the store's lease. Not a secret and not a key (nothing is deduplicated by it): it
 * only tells live clients apart, so it never fails: the app's `generateIdempotencyKey`, else
 * `crypto.randomUUID`, else the time and `Math.random`.
 */
export function ownerName(given: (() => string) | undefined): string {
  try {
    return keyGenerator(given)('outboxOwner');
  } catch {
    return `client-${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
  }
}
