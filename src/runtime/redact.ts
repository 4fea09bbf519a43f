import type { DecisionEvent, DecisionEventDraft } from './decision-events.js';

/**
 * A decision event as `onEvent` receives it: the fields the client set (origin ids, hosts, classes, attempt
 * numbers, delays, times; each member of `DecisionEvent` allows nothing else), without those left undefined, and
 * for a request's event with the path cut before its `?query` or `#fragment`, which often carry tokens (CONTRACT
 * rule 9).
 */
export function redactEvent(event: DecisionEventDraft): DecisionEvent {
  const out = Object.fromEntries(
    Object.entries(event).filter(([, value]) => value !== undefined),
  ) as unknown as DecisionEvent;
  return 'path' in out ? { ...out, path: out.path.replace(/[?#].*/s, '') } : out;
}
