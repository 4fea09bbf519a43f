import { RequestError } from '../errors/request-error.js';

/** Where the key generator looks for `crypto.randomUUID`: Hermes (React Native) and old runtimes lack it. */
type MaybeCrypto = { crypto?: { randomUUID?: () => string } };

/**
 * The client's key maker: the app's `generateIdempotencyKey`, else `crypto.randomUUID`, looked up when a key is
 * first needed (an `'auto'` key, a durable request), never when the client is made: a client on a runtime
 * without it works until it needs a key, and then says which option to give. `field` is the request field
 * that needed the key, so the `RequestError` names it.
 */
export function keyGenerator(given: (() => string) | undefined): (field: string) => string {
  return (field) => {
    if (given === undefined) {
      const randomUUID = (globalThis as MaybeCrypto).crypto?.randomUUID;
      if (typeof randomUUID !== 'function')
        throw new RequestError(
          field,
          'needs a generated key, and this runtime has no crypto.randomUUID (React Native: Hermes): ' +
            'pass generateIdempotencyKey to createFailoverClient, or give the request its own idempotencyKey',
        );
      return randomUUID.call((globalThis as MaybeCrypto).crypto);
    }
    let key: unknown;
    try {
      key = given();
    } catch (cause) {
      throw new RequestError(field, 'needs a generated key, and generateIdempotencyKey threw', { cause });
    }
    if (typeof key !== 'string' || !/^[\x20-\x7e]*[\x21-\x7e][\x20-\x7e]*$/.test(key))
      throw new RequestError(
        field,
        'needs a generated key, and generateIdempotencyKey did not return a non-empty string of printable ASCII',
      );
    return key;
  };
}

/**
 * A name for this client on the store's lease, made when the client is. Not a secret and not a key (nothing is
 * deduplicated by it): it only tells live clients apart, so it never fails creating a client. It takes the
 * app's `generateIdempotencyKey`, else `crypto.randomUUID`, else the time and `Math.random`.
 */
export function ownerName(given: (() => string) | undefined): string {
  try {
    return keyGenerator(given)('outboxOwner');
  } catch {
    return `client-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  }
}
