import type { ConnectivityHint } from './connectivity-source.js';

export interface HintSubscribers {
  /** Calls every listener with the hint, in the order they subscribed. */
  deliver(hint: ConnectivityHint): void;
  /** `ConnectivitySource.subscribe`: returns a function that unsubscribes (a second call changes nothing). */
  subscribe(listener: (hint: ConnectivityHint) => void): () => void;
}

/**
 * The listeners of a connectivity source. Each `subscribe` call is a subscription of its own (the same function
 * subscribed twice is two); a listener that throws does not keep the others from hearing the hint; one
 * unsubscribed during a round does not hear from it again. `onFirst` runs when the first listener comes and
 * `onLast` when the last one leaves, so that a source listens to its host only while someone listens to it.
 */
export function hintSubscribers(onFirst: () => void, onLast: () => void): HintSubscribers {
  const subscriptions = new Set<{ listener: (hint: ConnectivityHint) => void }>();
  return {
    deliver(hint) {
      for (const subscription of [...subscriptions]) {
        if (!subscriptions.has(subscription)) continue;
        try {
          subscription.listener(hint);
        } catch {
          // A listener's failure is its own; the other listeners still hear the hint.
        }
      }
    },
    subscribe(listener) {
      const subscription = { listener };
      subscriptions.add(subscription);
      if (subscriptions.size === 1) onFirst();
      return () => {
        if (!subscriptions.delete(subscription)) return;
        if (subscriptions.size === 0) onLast();
      };
    },
  };
}
