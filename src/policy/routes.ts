import { PolicyError, type PolicyIssue } from '../errors/policy-error.js';
import { isRecord } from './is-record.js';
import { isMethodToken } from './methods.js';
import type { Policy } from './policy.js';
import { layPolicy, type RequestPolicyInput } from './request-policy.js';
import { describeValue } from './schema.js';

/**
 * One kind of call of the client (the client's `routes` option): the requests it matches take its `policy`,
 * laid over the client's, and a request's own `policy` is laid over that. The first route that matches wins.
 */
export interface Route {
  /** Names the route in decision events and telemetry; its index in `routes` when it has none. */
  id?: string;
  /** Every field given must match; `{}` matches every request. */
  match: {
    /** A method or a list of methods, in any case (`'post'` matches `POST`). */
    method?: string | readonly string[];
    /**
     * A prefix of the request's path (`'/v1/payments'` matches `/v1/payments/42`), or a RegExp tested against
     * the path without its query and fragment.
     */
    path?: string | RegExp;
  };
  policy: RequestPolicyInput;
}

/** A route as the client keeps it: checked, its policy complete (laid over the client's). */
export interface ResolvedRoute {
  /** Its `id`, else its index in `routes`. */
  readonly name: string | number;
  readonly methods: readonly string[] | undefined;
  readonly path: string | RegExp | undefined;
  readonly policy: Readonly<Policy>;
}

const ROUTE_FIELDS = /^(id|match|policy)$/;
const MATCH_FIELDS = /^(method|path)$/;

/**
 * The client's routes, each checked and its policy laid over the client's `policy`; every problem of every
 * route is reported at once, by path (`routes[1].policy.backoff.maxMs: ...`, `routes[0].match.method: ...`).
 *
 * @throws PolicyError naming each bad field.
 */
export function resolveRoutes(given: unknown, policy: Readonly<Policy>): ResolvedRoute[] | undefined {
  if (given === undefined) return undefined;
  const issues: PolicyIssue[] = [];
  const add = (path: string, message: string) => void issues.push({ path, message });
  if (!Array.isArray(given))
    throw new PolicyError([
      { path: 'routes', message: `expected an array of { match, policy }, got ${describeValue(given)}` },
    ]);
  const ids = new Set<string>();
  const routes = given.map((route: unknown, i): ResolvedRoute | undefined => {
    const at = `routes[${i}]`;
    if (!isRecord(route))
      return (add(at, `expected an object { match, policy }, got ${describeValue(route)}`), undefined);
    for (const key of Object.keys(route)) if (!ROUTE_FIELDS.test(key)) add(`${at}.${key}`, 'unknown option');
    const { id } = route;
    if (id !== undefined && (typeof id !== 'string' || id === ''))
      add(`${at}.id`, `expected a non-empty string, got ${describeValue(id)}`);
    else if (id !== undefined && ids.has(id)) add(`${at}.id`, `duplicate route id "${id}"`);
    else if (id !== undefined) ids.add(id);
    const match = matchOf(route.match, `${at}.match`, add);
    let laid: Readonly<Policy> | undefined;
    try {
      laid = layPolicy(policy, route.policy, `${at}.policy`);
    } catch (error) {
      if (!(error instanceof PolicyError)) throw error;
      issues.push(...error.issues);
    }
    return match && laid && { name: typeof id === 'string' ? id : i, ...match, policy: laid };
  });
  if (issues.length > 0) throw new PolicyError(issues);
  return routes as ResolvedRoute[];
}

/** A route's `match`, checked; undefined when it is not an object. */
function matchOf(
  match: unknown,
  at: string,
  add: (path: string, message: string) => void,
): Pick<ResolvedRoute, 'methods' | 'path'> | undefined {
  if (!isRecord(match))
    return (add(at, `expected an object { method?, path? }, got ${describeValue(match)}`), undefined);
  for (const key of Object.keys(match)) if (!MATCH_FIELDS.test(key)) add(`${at}.${key}`, 'unknown option');
  const { method, path } = match;
  const list: unknown[] | undefined =
    method === undefined ? undefined : Array.isArray(method) ? method : [method];
  const methods =
    list !== undefined && list.length > 0 && list.every((m) => typeof m === 'string' && isMethodToken(m))
      ? (list as string[]).map((m) => m.toUpperCase())
      : undefined;
  if (list !== undefined && methods === undefined)
    add(`${at}.method`, `expected an HTTP method or a non-empty list of them, got ${describeValue(method)}`);
  if (
    path !== undefined &&
    !(path instanceof RegExp) &&
    !(typeof path === 'string' && path.charCodeAt(0) === 0x2f)
  )
    add(`${at}.path`, `expected a path prefix starting with "/" or a RegExp, got ${describeValue(path)}`);
  return {
    methods,
    path: path as string | RegExp | undefined,
  };
}

/** The first route that matches `method` (upper case, as sent) and `path` (its query and fragment ignored). */
export function matchRoute(
  routes: readonly ResolvedRoute[],
  method: string,
  path: string,
): ResolvedRoute | undefined {
  const bare = path.replace(/[?#].*/s, '');
  for (const route of routes) {
    if (route.methods !== undefined && !route.methods.includes(method)) continue;
    const want = route.path;
    if (want === undefined) return route;
    if (typeof want === 'string') {
      if (bare.startsWith(want)) return route;
      continue;
    }
    // A global or sticky RegExp would test from where its last match left off.
    want.lastIndex = 0;
    if (want.test(bare)) return route;
  }
  return undefined;
}
