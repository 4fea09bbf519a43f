import { PolicyError } from '../errors/policy-error.js';
import { RequestError } from '../errors/request-error.js';
import type { Policy } from '../policy/policy.js';
import { layPolicy } from '../policy/request-policy.js';
import { matchRoute, type ResolvedRoute } from '../policy/routes.js';
import type { PreparedRequest } from './prepare-request.js';

/**
 * Routes a request: names on it the route it matches (`prepared.route`, the first of `routes` that matches;
 * its decision events, telemetry and `classify` show it) and returns the policy it runs by, its own `policy`
 * laid over that route's, laid over the client's. With no routes and no policy of its own, the client's policy
 * itself: the common request pays for no merge.
 *
 * @throws RequestError naming the first bad field of the request's policy (`request.policy.attempts.max: ...`);
 *   its cause is the `PolicyError` listing every one.
 */
export function routeRequest(
  prepared: PreparedRequest,
  client: Readonly<Policy>,
  routes: readonly ResolvedRoute[] | undefined,
): Readonly<Policy> {
  const own = prepared.policy;
  if (routes === undefined && own === undefined) return client;
  const route = routes && matchRoute(routes, prepared.method, prepared.path);
  if (route !== undefined) prepared.route = route.name;
  const base = route === undefined ? client : route.policy;
  if (own === undefined) return base;
  try {
    return layPolicy(base, own, 'request.policy');
  } catch (error) {
    if (!(error instanceof PolicyError)) throw error;
    const [first] = error.issues;
    throw new RequestError(first!.path.slice('request.'.length), first!.message, { cause: error });
  }
}
