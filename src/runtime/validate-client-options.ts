import { definePolicy } from '../policy/define-policy.js';
import { defaultPolicy } from '../policy/defaults.js';
import type { Policy } from '../policy/policy.js';
import { resolveRoutes, type ResolvedRoute } from '../policy/routes.js';
import { PolicyError, type PolicyIssue } from '../errors/policy-error.js';
import type { FailoverClientOptions, OriginConfig } from './client-options.js';
import { isRecord } from '../policy/is-record.js';
import { canonicalOrigin } from './origin-url.js';
import { describeValue } from '../policy/describe-value.js';

export interface ResolvedOrigin extends Required<Omit<OriginConfig, 'pins'>> {
  /** The origin's certificate pins, when it has them (checked by `checkPins`). */
  pins?: readonly string[];
  /** The URL without a trailing slash, ready to join with a path. */
  base: string;
  host: string;
}

/**
 * Each option and what it must be: `''` a function, a list of names an object with those methods,
 * `null` checked on its own (origins, policy). A key not listed is an unknown option.
 */
const OPTIONS: Readonly<Record<string, string | null>> = {
  origins: null,
  policy: null,
  routes: null,
  transport: 'send',
  clock: 'now setTimeout clearTimeout',
  auth: 'headers refresh',
  reconcile: '',
  classify: '',
  isIdempotent: '',
  onEvent: '',
  onEventError: '',
  random: '',
  generateIdempotencyKey: '',
  inspect: null,
  connectivity: 'current subscribe',
  store: 'add update remove get list acquireLease releaseLease close',
  cache: 'get put delete clear',
  probe: null,
  outboxOwner: null,
  background: null,
  telemetry: 'start',
};
const ORIGIN_FIELDS = /^(id|url|allowInsecure|credentials|accepts|pins)$/;

/**
 * Checks every option of `createFailoverClient` and reports all bad fields at once, by path, in one
 * `PolicyError` (like the policy itself): `origins[1].url: expected an http(s) URL, got protocol "ftp:"`.
 */
export function validateClientOptions(options: FailoverClientOptions): {
  origins: ResolvedOrigin[];
  policy: Policy;
  routes: ResolvedRoute[] | undefined;
} {
  const issues: PolicyIssue[] = [];
  const add = (path: string, message: string) => void issues.push({ path, message });
  if (!isRecord(options)) throw new PolicyError([{ path: 'options', message: 'expected an object' }]);
  for (const [key, value] of Object.entries(options)) {
    const methods = OPTIONS[key];
    if (methods === undefined) add(key, 'unknown option');
    else if (methods === null || value === undefined) continue;
    else if (methods === '') {
      if (typeof value !== 'function') add(key, 'expected a function');
    } else if (!isRecord(value)) add(key, 'expected an object');
    else {
      for (const name of methods.split(' ')) {
        if (typeof value[name] !== 'function') add(`${key}.${name}`, 'expected a function');
      }
    }
  }
  checkProbe(options.probe, add);
  checkInspect(options.inspect, add);
  if (
    options.outboxOwner !== undefined &&
    (typeof options.outboxOwner !== 'string' || options.outboxOwner === '')
  )
    add('outboxOwner', 'expected a non-empty string');
  if (options.background !== undefined && options.background !== 'service-worker')
    add('background', `expected 'service-worker', got ${describeValue(options.background)}`);
  const origins = resolveOrigins(options.origins, add);
  const pins = checkPins(options.origins, options.transport, add);
  let policy: Policy | undefined;
  try {
    policy = definePolicy(options.policy);
  } catch (error) {
    if (!(error instanceof PolicyError)) throw error;
    issues.push(...error.issues);
  }
  // Routes are laid over the client's policy: checked once that policy is.
  let routes: ResolvedRoute[] | undefined;
  try {
    routes = resolveRoutes(options.routes, policy ?? defaultPolicy);
  } catch (error) {
    if (!(error instanceof PolicyError)) throw error;
    issues.push(...error.issues);
  }
  if (issues.length > 0 || policy === undefined) throw new PolicyError(issues);
  // Without issues every origin was resolved, in the order given.
  return { origins: origins.map((origin, i) => withPins(origin, pins[i])), policy, routes };
}

/** The origins, each checked: unique ids, https unless allowInsecure (rule 8), nothing secret in the URL. */
function resolveOrigins(given: unknown, add: (path: string, message: string) => void): ResolvedOrigin[] {
  if (!Array.isArray(given) || given.length === 0) {
    add('origins', 'expected a non-empty array of { id, url }');
    return [];
  }
  const seen = new Set<unknown>();
  return given.flatMap((origin: unknown, i) => {
    const at = `origins[${i}]`;
    const fail = (field: string, message: string) => (add(`${at}.${field}`, message), []);
    if (!isRecord(origin)) return (add(at, 'expected an object { id, url }'), []);
    for (const key of Object.keys(origin)) if (!ORIGIN_FIELDS.test(key)) fail(key, 'unknown option');
    const { id, url, allowInsecure = false, credentials = 'send', accepts = 'all' } = origin;
    if (typeof id !== 'string' || id === '') fail('id', 'expected a non-empty string');
    else if (seen.has(id)) fail('id', `duplicate origin id "${id}"`);
    seen.add(id);
    if (typeof allowInsecure !== 'boolean') fail('allowInsecure', 'expected a boolean');
    if (credentials !== 'send' && credentials !== 'omit') fail('credentials', 'expected "send" or "omit"');
    if (accepts !== 'all' && accepts !== 'reads') fail('accepts', 'expected "all" or "reads"');
    let parsed: URL;
    try {
      // Scheme and host compared in lower case by failwise itself: React Native's URL keeps them as given.
      parsed = new URL(typeof url === 'string' ? canonicalOrigin(url) : (url as string));
    } catch {
      return fail('url', 'expected an absolute http(s) URL');
    }
    const { protocol } = parsed;
    if (protocol === 'http:' && allowInsecure !== true) {
      return fail('url', 'http: is refused; use https: or set allowInsecure: true (docs/rules.md, rule 8)');
    }
    if (protocol !== 'https:' && protocol !== 'http:')
      return fail('url', `expected an http(s) URL, got protocol "${protocol}"`);
    if (parsed.search || parsed.hash || parsed.username || parsed.password) {
      return fail('url', 'must not contain a query, fragment or credentials; send credentials with `auth`');
    }
    const resolved = {
      id,
      url,
      allowInsecure,
      credentials,
      accepts,
      base: parsed.href.replace(/\/+$/, ''),
      host: parsed.host,
    };
    // Shapes that failed above are reported; the client is never built from them.
    return [resolved as ResolvedOrigin];
  });
}

/** `probe`: the app's function, or the request to send: `{ method?: 'GET' | 'HEAD', path?: '/...' }`. */
function checkProbe(probe: unknown, add: (path: string, message: string) => void) {
  if (probe === undefined || typeof probe === 'function') return;
  if (!isRecord(probe)) return add('probe', 'expected a function or { method, path }');
  for (const key of Object.keys(probe))
    if (key !== 'method' && key !== 'path') add(`probe.${key}`, 'unknown option');
  if (probe.method !== undefined && probe.method !== 'GET' && probe.method !== 'HEAD')
    add('probe.method', 'expected "GET" or "HEAD"');
  if (probe.path !== undefined && !(typeof probe.path === 'string' && probe.path.startsWith('/')))
    add('probe.path', 'expected a path that starts with "/"');
}

/** `inspect` is what `withInspector(observer)` returns: an observer given directly would be silently unused. */
function checkInspect(inspect: unknown, add: (path: string, message: string) => void) {
  if (inspect === undefined) return;
  const runner = isRecord(inspect) ? inspect.runner : undefined;
  if (!isRecord(runner) || typeof runner.prepare !== 'function')
    add(
      'inspect',
      "expected withInspector(observer) from 'failwise/machines' (an inspection observer goes inside it)",
    );
}

/** `sha256/` + the base64 of 32 bytes: 43 characters whose last carries 2 zero bits, then one `=`. */
const PIN = /^sha256\/[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

/**
 * `origins[].pins`, for each origin given (a frozen copy, or undefined): each pin well formed, on an
 * https: origin, on every origin once one has them, and a transport that checks them
 * (docs/transports.md, "Certificate pins"). Without `transport` the client uses fetchTransport, which cannot.
 */
function checkPins(
  given: unknown,
  transport: unknown,
  add: (path: string, message: string) => void,
): Array<readonly string[] | undefined> {
  if (!Array.isArray(given)) return [];
  const origins = given.map((origin: unknown) => (isRecord(origin) ? origin : {}));
  const pinned = origins.filter((origin) => origin.pins !== undefined);
  if (pinned.length === 0) return origins.map(() => undefined);
  const named = pinned.map((origin) => JSON.stringify(origin.id)).join(', ');
  const result = origins.map((origin, i) => {
    const at = `origins[${i}].pins`;
    const { pins, url } = origin;
    if (pins === undefined) {
      add(
        at,
        `origin ${JSON.stringify(origin.id)} has no pins while ${named} ${pinned.length === 1 ? 'has' : 'have'}: every origin needs pins, or failing over to it would be an outage`,
      );
      return undefined;
    }
    if (!Array.isArray(pins) || pins.length === 0) {
      add(at, 'expected a non-empty array of "sha256/<base64>" pins');
      return undefined;
    }
    pins.forEach((pin: unknown, j) => {
      if (typeof pin !== 'string' || !PIN.test(pin))
        add(
          `${at}[${j}]`,
          `expected "sha256/" and the base64 of a 32-byte SPKI SHA-256 digest (44 characters), got ${typeof pin === 'string' ? JSON.stringify(pin.slice(0, 80)) : typeof pin}`,
        );
    });
    if (protocolOf(url) === 'http:') add(at, 'pins need an https: URL: an http: origin shows no certificate');
    return Object.freeze([...(pins as string[])]);
  });
  // A transport that is not an object at all is reported as such above.
  if (transport === undefined || (isRecord(transport) && transport.checksPins !== true)) {
    const which = isRecord(transport)
      ? `transport ${JSON.stringify(transport.name)} does not check certificate pins (no checksPins: true)`
      : 'the default fetchTransport cannot check certificate pins';
    add('transport', `${which}, and origins ${named} have pins; use nodeHttpTransport() from failwise/node`);
  }
  return result;
}

function protocolOf(url: unknown): string | undefined {
  try {
    return new URL(typeof url === 'string' ? canonicalOrigin(url) : (url as string)).protocol;
  } catch {
    return undefined; // reported with origins[i].url
  }
}

function withPins(origin: ResolvedOrigin, pins: readonly string[] | undefined): ResolvedOrigin {
  return pins === undefined ? origin : { ...origin, pins };
}
