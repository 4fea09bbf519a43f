import type { HealthChanged, OriginHealthContext } from './origin-health.types.js';

/**
 * What the origin-health machine tells its listeners, as plain functions: the machine registers each as a
 * named action, and the lean executor calls them directly.
 */
type Args = { context: OriginHealthContext };

/** A change of state, with the criterion behind it. */
export function announceChange({ context }: Args, params: Omit<HealthChanged, 'type' | 'at'>): HealthChanged {
  return { type: 'health-changed', ...params, at: context.now };
}

/** Traffic left the primary: the criterion is the one `failOver` recorded before clearing the evidence. */
export function announceFailover(
  { context }: Args,
  { from }: { from: 'healthy' | 'suspect' },
): HealthChanged {
  return { type: 'health-changed', from, to: 'failedOver', criterion: context.trippedBy!, at: context.now };
}
