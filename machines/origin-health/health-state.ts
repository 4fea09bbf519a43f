import type { HealthState } from './origin-health.types.js';

/** The state names `client.health()` reports, from a snapshot's value. */
export function healthStateOf(value: unknown): HealthState {
  if (typeof value === 'object' && value !== null && 'onPrimary' in value)
    return (value as { onPrimary: 'healthy' | 'suspect' }).onPrimary;
  return (typeof value === 'string' ? value : Object.keys(value as object)[0]) as HealthState;
}
