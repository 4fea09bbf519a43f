import type { DecisionEvent } from './decision-events.js';

/**
 * A decision event as `onEvent` receives it: the fields the client set (origin ids, hosts, classes,
 * attempt numbers, delays, times; the `DecisionEvent` type allows nothing else), without those left
 * undefined, and with the path cut before its `?query` or `#fragment`, which often carry tokens
 * (CONTRACT rule 9).
 */
export function redactEvent(event: DecisionEvent): DecisionEvent {
  const out = Object.fromEntries(Object.entries(event).filter(([, value]) => value !== undefined));
  return { ...(out as unknown as DecisionEvent), path: event.path.replace(/[?#].*/s, '') };
}
