/** An RFC 9110 token (§5.6.2): what an HTTP method and a header field name must be. */
export const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

import type { Failure } from './failure.js';

/**
 * Whether a request is a write in the sense of rule 2: sending it twice could apply it twice.
 * True for every method except GET, HEAD, OPTIONS, PUT, DELETE and TRACE (compared case-insensitively).
 * The request can say otherwise: `idempotent: true` makes any method safe to repeat (a POST used as a
 * query), `idempotent: false` makes any method a write (a PUT with side effects).
 */
export function isWrite(method: string, idempotent?: boolean): boolean {
  return idempotent === undefined ? !oneOf(IDEMPOTENT_METHODS, method) : !idempotent;
}

/**
 * The methods RFC 9110 §9.2.2 calls idempotent: sending one twice has the effect of sending it once. (PUT and
 * DELETE change state, but idempotently, so they are not "writes" in the sense of rule 2.)
 */
const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
/** RFC 9110 §9.2.1's safe methods. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/**
 * Whether `method` is in `methods` (upper case), compared case-insensitively. A set lookup, not a regular
 * expression: every request asks, and on an engine without a JIT (Hermes) a regular expression costs far more.
 */
function oneOf(methods: ReadonlySet<string>, method: string): boolean {
  return methods.has(method) || methods.has(method.toUpperCase());
}

/** Methods that are RFC 9110 tokens, known without testing `HTTP_TOKEN`. */
const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'OPTIONS',
  'PUT',
  'DELETE',
  'TRACE',
  'POST',
  'PATCH',
]);

/** Whether `method` is an RFC 9110 token (`HTTP_TOKEN`); the usual methods are answered without the expression. */
export function isMethodToken(method: string): boolean {
  return KNOWN_METHODS.has(method) || HTTP_TOKEN.test(method);
}

/**
 * Whether a method only reads (RFC 9110 §9.2.1 safe methods: GET, HEAD, OPTIONS, TRACE). Only these go to an
 * origin with `accepts: 'reads'`: a PUT or DELETE is repeatable, but it still changes state.
 */
export function isSafeMethod(method: string): boolean {
  return oneOf(SAFE_METHODS, method);
}

/** Options of `mayReplay`. */
export interface MayReplayOptions {
  /** Whether the request is a write (see `isWrite`). */
  write: boolean;
  /** Whether the request carries an idempotency key, so the server can recognise a repeat. */
  hasIdempotencyKey: boolean;
}

/**
 * Whether the request that failed with `failure` may be sent again without risking a double write
 * (rule 2): it is not a write, or nothing reached the server (`requestSent: 'no'`), or it carries an
 * idempotency key. Otherwise the engine asks `reconcile`, or ends the request `failed` with `unsafe-to-replay`.
 */
export function mayReplay(failure: Failure, options: MayReplayOptions): boolean {
  return !options.write || failure.requestSent === 'no' || options.hasIdempotencyKey;
}
