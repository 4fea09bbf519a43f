/** The four states of an origin set, as `client.health()` names them. */
export type HealthState = 'healthy' | 'suspect' | 'failedOver' | 'probingFailback';

/**
 * The state names `client.health()` reports, from an origin-health snapshot's value: `healthy` and `suspect`
 * sit under `onPrimary`, `probingFailback` is a parent state of its own, `failedOver` a leaf.
 */
export function healthStateOf(value: unknown): HealthState {
  if (typeof value === 'object' && value !== null && 'onPrimary' in value)
    return (value as { onPrimary: 'healthy' | 'suspect' }).onPrimary;
  return (typeof value === 'string' ? value : Object.keys(value as object)[0]) as HealthState;
}
