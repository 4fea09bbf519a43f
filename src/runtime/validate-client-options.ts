import { definePolicy } from '../policy/define-policy.js';
import type { Policy } from '../policy/policy.js';
import { PolicyError, type PolicyIssue } from '../errors/policy-error.js';
import type { FailoverClientOptions, OriginConfig } from './client-options.js';

export interface ResolvedOrigin extends Required<OriginConfig> {
  /** The URL without a trailing slash, ready to join with a path. */
  base: string;
  host: string;
}

const KNOWN_OPTIONS = new Set([
  'origins',
  'policy',
  'transport',
  'clock',
  'auth',
  'reconcile',
  'onEvent',
  'inspect',
  'random',
  'generateIdempotencyKey',
]);
const KNOWN_ORIGIN_FIELDS = new Set(['id', 'url', 'allowInsecure', 'credentials']);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Checks every option of `createFailoverClient` and reports all bad fields at once, by path, in one
 * `PolicyError` (like the policy itself): `origins[1].url: expected an https: URL, got "http://…"`.
 */
export function validateClientOptions(options: FailoverClientOptions): {
  origins: ResolvedOrigin[];
  policy: Policy;
} {
  const issues: PolicyIssue[] = [];
  const add = (path: string, message: string) => issues.push({ path, message });
  if (!isObject(options)) throw new PolicyError([{ path: 'options', message: 'expected an object' }]);

  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) add(key, 'unknown option');
  }
  const origins = validateOrigins(options.origins, add);

  for (const name of ['auth', 'transport', 'clock'] as const) {
    if (options[name] !== undefined && !isObject(options[name])) add(name, 'expected an object');
  }
  if (options.auth !== undefined && isObject(options.auth)) {
    if (typeof options.auth.headers !== 'function')
      add('auth.headers', 'expected a function (originId) => headers');
    if (typeof options.auth.refresh !== 'function')
      add('auth.refresh', 'expected a function () => Promise<void>');
  }
  if (
    options.transport !== undefined &&
    isObject(options.transport) &&
    typeof options.transport.send !== 'function'
  ) {
    add('transport.send', 'expected a function (request) => Promise<TransportResult>');
  }
  if (options.clock !== undefined && isObject(options.clock)) {
    for (const fn of ['now', 'setTimeout', 'clearTimeout'] as const) {
      if (typeof options.clock[fn] !== 'function') add(`clock.${fn}`, 'expected a function');
    }
  }
  for (const name of ['reconcile', 'onEvent', 'random', 'generateIdempotencyKey'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') add(name, 'expected a function');
  }
  if (options.inspect !== undefined && typeof options.inspect !== 'function' && !isObject(options.inspect)) {
    add('inspect', 'expected an inspection observer or function');
  }

  let policy: Policy | undefined;
  try {
    policy = definePolicy(options.policy ?? {});
  } catch (error) {
    if (!(error instanceof PolicyError)) throw error;
    issues.push(...error.issues);
  }
  if (issues.length > 0 || policy === undefined) throw new PolicyError(issues);
  return { origins, policy };
}

function validateOrigins(value: unknown, add: (path: string, message: string) => void): ResolvedOrigin[] {
  if (!Array.isArray(value) || value.length === 0) {
    add('origins', 'expected a non-empty array of { id, url }');
    return [];
  }
  const seen = new Set<string>();
  const resolved: ResolvedOrigin[] = [];
  value.forEach((origin: unknown, i) => {
    const at = `origins[${i}]`;
    if (!isObject(origin)) return add(at, 'expected an object { id, url }');
    for (const key of Object.keys(origin))
      if (!KNOWN_ORIGIN_FIELDS.has(key)) add(`${at}.${key}`, 'unknown option');
    const { id, url, allowInsecure = false, credentials = 'send' } = origin;
    if (credentials !== 'send' && credentials !== 'omit')
      add(`${at}.credentials`, 'expected "send" or "omit"');
    if (typeof id !== 'string' || id.trim() === '') add(`${at}.id`, 'expected a non-empty string');
    else if (seen.has(id)) add(`${at}.id`, `duplicate origin id "${id}"`);
    else seen.add(id);
    if (typeof allowInsecure !== 'boolean') add(`${at}.allowInsecure`, 'expected a boolean');
    let parsed: URL | undefined;
    try {
      parsed = typeof url === 'string' ? new URL(url) : undefined;
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined)
      return add(`${at}.url`, 'expected an absolute URL such as "https://api.example.com"');
    if (parsed.protocol === 'http:' && allowInsecure !== true) {
      return add(`${at}.url`, 'http: is refused; use https: or set allowInsecure: true (CONTRACT rule 8)');
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
      return add(`${at}.url`, `expected an http(s) URL, got protocol "${parsed.protocol}"`);
    }
    if (parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') {
      return add(
        `${at}.url`,
        'must not contain a query, fragment or credentials; send credentials with `auth`',
      );
    }
    if (typeof id === 'string' && typeof allowInsecure === 'boolean') {
      resolved.push({
        id,
        url: url as string,
        allowInsecure,
        credentials: credentials === 'omit' ? 'omit' : 'send',
        base: parsed.href.replace(/\/+$/, ''),
        host: parsed.host,
      });
    }
  });
  return resolved;
}
