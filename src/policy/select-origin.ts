import type { HealthState } from './health-state.js';
import { perOrigin } from './per-origin.js';

/** One origin as the health machine sees it. The first of the list is the primary; the rest are backups, in order. */
export interface HealthOrigin {
  id: string;
  /** `reads`: never sent a write (only GET, HEAD, OPTIONS and TRACE go to it). */
  accepts: 'all' | 'reads';
}

/** What `selectOrigin` reads of the origin-health machine's context. */
export interface OriginRoster {
  origins: readonly HealthOrigin[];
  /** A backup that failed `failoverAfter` times in a row takes no traffic until this time. */
  backupDownUntil: Readonly<Record<string, number>>;
}

/**
 * The origin the next attempt goes to, or `undefined` when none may take it (`no-healthy-origin`).
 * While traffic is on the primary (`healthy`, `suspect`) every origin is a candidate in order; failed over,
 * the primary is not (it gets probes only). Writes skip origins that take reads only, and backups taken out
 * of rotation are skipped until their time is up. `skip`, when given, leaves out more origins (the client's
 * server holds: the first origin after them that may take the request).
 *
 * `avoid` (Envoy's `previous_hosts`) lists the origins that already failed the request being retried: the
 * first candidate not among them is taken when there is one, else the origin named without them.
 */
export function selectOrigin(
  context: OriginRoster,
  state: HealthState,
  write: boolean,
  now: number,
  skip?: (origin: string) => boolean,
  avoid: readonly string[] = [],
): string | undefined {
  if (avoid.length > 0) {
    const other = selectOrigin(
      context,
      state,
      write,
      now,
      (origin) => avoid.includes(origin) || (skip !== undefined && skip(origin)),
    );
    if (other !== undefined) return other;
  }
  const onPrimary = state === 'healthy' || state === 'suspect';
  const { origins } = context;
  // A loop from the first candidate, not `slice().find(callback)`: every attempt asks, and on an engine without
  // a JIT (Hermes) the copy and a callback per origin cost more than the test itself.
  for (let i = onPrimary ? 0 : 1; i < origins.length; i++) {
    const origin = origins[i]!;
    if (
      (!write || origin.accepts === 'all') &&
      !(skip !== undefined && skip(origin.id)) &&
      !((perOrigin(context.backupDownUntil, origin.id) ?? -Infinity) > now)
    )
      return origin.id;
  }
  return undefined;
}
