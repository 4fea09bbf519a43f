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

/**
 * Copies only the allowed fields of a decision event, so that nothing else (a header, a body, a message
 * that quotes a URL) can reach `onEvent` even if a caller passes a richer object by mistake.
 */
export function redactEvent(event: DecisionEvent): DecisionEvent {
  const out: DecisionEvent = {
    type: event.type,
    requestId: event.requestId,
    origin: event.origin,
    host: event.host,
    method: event.method,
    path: pathWithoutQuery(event.path),
    attempt: event.attempt,
    elapsedMs: event.elapsedMs,
  };
  if (event.failureClass !== undefined) out.failureClass = event.failureClass;
  if (event.requestSent !== undefined) out.requestSent = event.requestSent;
  if (event.status !== undefined) out.status = event.status;
  if (event.delayMs !== undefined) out.delayMs = event.delayMs;
  if (event.retryAfterMs !== undefined) out.retryAfterMs = event.retryAfterMs;
  if (event.reason !== undefined) out.reason = event.reason;
  if (event.from !== undefined) out.from = event.from;
  if (event.to !== undefined) out.to = event.to;
  return out;
}
