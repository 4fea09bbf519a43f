import type { ConnectivityHint, ConnectivitySource, ConnectivityState } from './connectivity-source.js';
import { ArgumentError } from '../errors/argument-error.js';
import { describeValue } from '../policy/describe-value.js';

/** A source the app feeds itself, e.g. from React Native's NetInfo or its own reachability check. */
export interface ManualConnectivity extends ConnectivitySource {
  /** Reports a hint: `online` / `offline` set the state; `changed` keeps it and tells listeners. */
  set(hint: ConnectivityHint): void;
}

/**
 * A connectivity source driven by the app. Starts `unknown` (treated as online) unless told otherwise.
 * Listeners are called in order; a listener that throws does not stop the others.
 */
export function manualConnectivity(initial: ConnectivityState = 'unknown'): ManualConnectivity {
  // `current()` answers only the three states every reader of a source knows; a typo here would be read as
  // online (anything but 'offline') and never be noticed.
  if (initial !== 'online' && initial !== 'offline' && initial !== 'unknown')
    throw new ArgumentError(
      'manualConnectivity',
      'initial',
      `expected "online", "offline" or "unknown", got ${describeValue(initial)}`,
    );
  let state = initial;
  const listeners = new Set<(hint: ConnectivityHint) => void>();
  return {
    current: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    set(hint) {
      if (hint !== 'online' && hint !== 'offline' && hint !== 'changed')
        throw new ArgumentError(
          'manualConnectivity.set',
          'hint',
          `expected "online", "offline" or "changed", got ${describeValue(hint)}`,
        );
      if (hint !== 'changed') {
        if (hint === state) return;
        state = hint;
      }
      for (const listener of [...listeners]) {
        try {
          listener(hint);
        } catch {
          // A listener's failure is its own; the other listeners still hear the hint.
        }
      }
    },
  };
}
