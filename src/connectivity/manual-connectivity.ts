import type { ConnectivityHint, ConnectivitySource, ConnectivityState } from './connectivity-source.js';
import { ArgumentError } from '../errors/argument-error.js';

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
          `expected "online", "offline" or "changed", got ${String(hint)}`,
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
