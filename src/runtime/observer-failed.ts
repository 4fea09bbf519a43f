import type { DecisionEvent } from './decision-events.js';

/**
 * Where an `onEvent` observer's exception goes: the app's `onEventError(error, event)` if given; otherwise
 * the host's `reportError` (browsers, Deno, Bun: the window's `error` event, so error trackers see it, as they
 * see an event listener's exception), else `console.error` (Node, React Native). Never thrown back: logging
 * must not change a request's outcome. An `onEventError` that throws itself is reported the default way.
 */
export function observerFailed(
  onEventError: ((error: unknown, event: DecisionEvent) => void) | undefined,
  error: unknown,
  event: DecisionEvent,
): void {
  try {
    if (onEventError) return onEventError(error, event);
  } catch (second) {
    error = second;
  }
  try {
    const { reportError } = globalThis as { reportError?: (error: unknown) => void };
    if (typeof reportError === 'function') reportError.call(globalThis, error);
    else console.error(`failwise: onEvent threw on a "${event.type}" event`, error);
  } catch {
    // A host reporter that throws has nowhere further to report to.
  }
}
