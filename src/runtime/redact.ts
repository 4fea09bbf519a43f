import type { DecisionEvent, DecisionEventDraft } from './decision-events.js';

/**
 * A decision event as `onEvent` receives it: the fields the client set (origin ids, hosts, classes, attempt
 * numbers, delays, times; each member of `DecisionEvent` allows nothing else), without those left undefined, and
 * for a request's event with the path cut before its `?query` or `#fragment`, which often carry tokens
 * (rule 9).
 */
export function redactEvent(event: DecisionEventDraft): DecisionEvent {
  // One pass and one object per event (several per request), the keys in the order the client set them.
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(event)) {
    const value = (event as Record<string, unknown>)[key];
    if (value === undefined) continue;
    out[key] = key === 'path' ? withoutQuery(value as string) : value;
  }
  return out as unknown as DecisionEvent;
}

/** A path cut before its `?query` or `#fragment`, which often carry tokens (rule 9). */
export const withoutQuery = (path: string): string => path.replace(/[?#].*/s, '');
