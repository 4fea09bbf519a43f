import type { DecisionEvent } from './decision-events.js';

/** The path part of a request path, without `?query` or `#fragment`: queries often carry tokens. */
export function pathWithoutQuery(path: string): string {
  const end = path.search(/[?#]/);
  return end === -1 ? path : path.slice(0, end);
}

/** The host (with port) of an origin URL, the only part of it that decision events carry. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/** The fields a decision event may carry (CONTRACT rule 9); anything else is dropped. */
const ALLOWED_FIELDS = [
  'type',
  'requestId',
  'origin',
  'host',
  'method',
  'path',
  'attempt',
  'elapsedMs',
  'failureClass',
  'requestSent',
  'status',
  'delayMs',
  'retryAfterMs',
  'reason',
  'from',
  'to',
] as const;

/**
 * Copies only the allowed, defined fields of a decision event, with the path cut before its query, so
 * that nothing else (a header, a body, a message that quotes a URL) can reach `onEvent`, even if a
 * caller passes a richer object by mistake.
 */
export function redactEvent(event: DecisionEvent): DecisionEvent {
  const out: Record<string, unknown> = {};
  for (const field of ALLOWED_FIELDS) if (event[field] !== undefined) out[field] = event[field];
  out['path'] = pathWithoutQuery(event.path);
  return out as unknown as DecisionEvent;
}
