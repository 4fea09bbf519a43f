import { RequestError } from '../errors/request-error.js';

// fetch's unions, written out under names of their own: the DOM lib's (`RequestCredentials`, ...) are missing
// from a Node project's types (`lib: ["ES2022"]`, `types: ["node"]`), and this file's declarations ship in every
// entry's .d.ts. They are the same unions, so a DOM `RequestInit`'s values fit them as they are.

/** fetch's `RequestCredentials`. */
export type FetchCredentials = 'omit' | 'same-origin' | 'include';
/** fetch's `RequestMode`. */
export type FetchMode = 'cors' | 'navigate' | 'no-cors' | 'same-origin';
/** fetch's `RequestRedirect`. */
export type FetchRedirect = 'error' | 'follow' | 'manual';
/** fetch's `RequestCache`. */
export type FetchCache = 'default' | 'force-cache' | 'no-cache' | 'no-store' | 'only-if-cached' | 'reload';
/** fetch's `ReferrerPolicy`. */
export type FetchReferrerPolicy =
  | ''
  | 'no-referrer'
  | 'no-referrer-when-downgrade'
  | 'origin'
  | 'origin-when-cross-origin'
  | 'same-origin'
  | 'strict-origin'
  | 'strict-origin-when-cross-origin'
  | 'unsafe-url';

/**
 * fetch's own `RequestInit` members that failwise does not decide but passes on to the fetch transport
 * (`client.fetch`'s `init`, or `fetchOptions` on `client.request`). `nodeHttpTransport` has no such notions
 * and ignores them.
 */
export interface FetchOptions {
  credentials?: FetchCredentials;
  mode?: FetchMode;
  redirect?: FetchRedirect;
  cache?: FetchCache;
  referrer?: string;
  referrerPolicy?: FetchReferrerPolicy;
  integrity?: string;
  keepalive?: boolean;
  /** fetch's `priority` (browsers): `high`, `low` or `auto`. */
  priority?: 'high' | 'low' | 'auto';
}

/** Each member and the values the Fetch standard allows (`string`, `boolean`: any of that type). */
const MEMBERS: Readonly<Record<keyof FetchOptions, readonly string[] | 'string' | 'boolean'>> = {
  credentials: ['omit', 'same-origin', 'include'],
  mode: ['cors', 'no-cors', 'same-origin', 'navigate'],
  redirect: ['follow', 'error', 'manual'],
  cache: ['default', 'no-store', 'reload', 'no-cache', 'force-cache', 'only-if-cached'],
  referrer: 'string',
  referrerPolicy: [
    '',
    'no-referrer',
    'no-referrer-when-downgrade',
    'same-origin',
    'origin',
    'strict-origin',
    'origin-when-cross-origin',
    'strict-origin-when-cross-origin',
    'unsafe-url',
  ],
  integrity: 'string',
  keepalive: 'boolean',
  priority: ['high', 'low', 'auto'],
};

export const FETCH_OPTION_NAMES = Object.keys(MEMBERS) as (keyof FetchOptions)[];

/**
 * The fetch members `source` sets, skipping those it leaves undefined and those equal to `skip`'s (a `Request`'s
 * defaults, which fetch would use anyway). A member `skip` has a default for and `source` leaves null is skipped
 * too: whatwg-fetch's `Request` (React Native) has `mode` and `referrer` null, meaning the runtime's default.
 */
export function pickFetchOptions(
  source: Partial<Record<keyof FetchOptions, unknown>>,
  skip: Partial<Record<keyof FetchOptions, unknown>> = {},
): FetchOptions {
  const picked: Record<string, unknown> = {};
  for (const name of FETCH_OPTION_NAMES) {
    const value = source[name];
    if (value === undefined || value === skip[name] || (value === null && skip[name] !== undefined)) continue;
    picked[name] = value;
  }
  return picked;
}

/** What a `Request` says for each fetch member that it was not given. */
export const REQUEST_DEFAULTS: Readonly<Partial<Record<keyof FetchOptions, unknown>>> = {
  credentials: 'same-origin',
  mode: 'cors',
  redirect: 'follow',
  cache: 'default',
  referrer: 'about:client',
  referrerPolicy: '',
  integrity: '',
  keepalive: false,
};

/** Checks `fetchOptions` and returns a copy; throws `RequestError` naming the member. */
export function checkFetchOptions(value: unknown): FetchOptions | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new RequestError('fetchOptions', 'expected an object of fetch RequestInit members');
  const copy: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(value)) {
    const allowed = MEMBERS[name as keyof FetchOptions] as (typeof MEMBERS)[keyof FetchOptions] | undefined;
    if (allowed === undefined)
      throw new RequestError(
        `fetchOptions.${name}`,
        `unknown member (known: ${FETCH_OPTION_NAMES.join(', ')})`,
      );
    if (member === undefined) continue;
    const ok =
      allowed === 'string' || allowed === 'boolean'
        ? typeof member === allowed
        : typeof member === 'string' && allowed.includes(member);
    if (!ok)
      throw new RequestError(
        `fetchOptions.${name}`,
        typeof allowed === 'string'
          ? `expected a ${allowed}`
          : `expected one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`,
      );
    copy[name] = member;
  }
  return Object.keys(copy).length > 0 ? copy : undefined;
}
