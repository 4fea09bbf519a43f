import { FailwiseError } from '../errors/failwise-error.js';
import type { FailoverClientOptions } from './client-options.js';
import { createFailoverClient } from './create-failover-client.js';
import type { FailoverClient } from './failover-client.js';
import type { FlushResult } from './flush-result.js';
import { drainLimitOf } from './drain-options.js';
import { OUTBOX_SYNC_TAG, type SyncRegistration } from './background-sync.js';

/** An `ExtendableEvent` of the worker's: only what is used. */
interface ExtendableEventLike {
  waitUntil(promise: Promise<unknown>): void;
}

/** A Background Sync `sync` event, or a Periodic Background Sync `periodicsync` event (no `lastChance`). */
export interface OutboxSyncEvent extends ExtendableEventLike {
  tag: string;
  lastChance?: boolean;
}

/** The service worker's global scope (`self`): only what `serviceWorkerOutbox` uses. */
export interface ServiceWorkerScope {
  addEventListener(type: 'sync' | 'periodicsync', listener: (event: OutboxSyncEvent) => void): void;
  removeEventListener(type: 'sync' | 'periodicsync', listener: (event: OutboxSyncEvent) => void): void;
  /**
   * The worker's registration; its `sync` (Background Sync), where the browser has it, registers the tag again.
   * Typed loosely: the DOM and WebWorker libs have no Background Sync types.
   */
  registration?: object | undefined;
}

/** `serviceWorkerOutbox`'s options: the pages' client options, and how long each drain may start sends. */
export interface ServiceWorkerOutboxOptions extends Omit<FailoverClientOptions, 'background'> {
  /**
   * How long each drain (on `sync`, on `periodicsync`, at the worker's start) may start sends, in ms; sends in
   * flight then are awaited, each within its request's budget. Chromium ends a `sync` event after a few
   * minutes. @default 120000
   */
  timeLimitMs?: number | undefined;
}

/** What `serviceWorkerOutbox` returns. */
export interface ServiceWorkerOutbox {
  /** The worker's client, on the pages' store. */
  readonly client: FailoverClient;
  /** The drain the worker began as it started. */
  readonly started: Promise<FlushResult>;
  /** Drains the outbox now, as a `sync` event does. */
  drain(): Promise<FlushResult>;
  /** Stops listening to `sync` and `periodicsync`, and closes the client (and its store). */
  close(): Promise<void>;
}

/** `ServiceWorkerOutboxOptions.timeLimitMs`'s default: within the few minutes Chromium gives a `sync` event. */
export const SERVICE_WORKER_DRAIN_LIMIT_MS = 120_000;

/**
 * Sends the pages' durable work from their service worker. Call it at the top of the worker's script, with the
 * pages' `origins`, `policy` and `store: indexedDbStore(name)` (one store, one lease: a Web Lock the pages and the
 * worker share, so an entry is never sent by two of them at once). It drains the outbox:
 * - on each Background Sync `sync` event tagged `'failwise-outbox'` (a page with `background: 'service-worker'`
 *   registers it after each durable write), within `event.waitUntil`. Entries still pending make the event fail,
 *   so the browser fires it again later with its own backoff; on its `lastChance` the worker registers the tag
 *   again instead, so a later `sync` comes once the network is back;
 * - on each `periodicsync` event with that tag (where the app registered one: Chromium, installed apps);
 * - as the worker starts (whatever woke it), so that browsers without Background Sync send too.
 * Throws `PolicyError` like `createFailoverClient`, and `ArgumentError` for a bad `timeLimitMs`.
 */
export function serviceWorkerOutbox(
  scope: ServiceWorkerScope,
  options: ServiceWorkerOutboxOptions,
): ServiceWorkerOutbox {
  const { timeLimitMs, ...clientOptions } = options;
  const limit = drainLimitOf({ timeLimitMs: timeLimitMs ?? SERVICE_WORKER_DRAIN_LIMIT_MS });
  const client = createFailoverClient(clientOptions);
  const drain = () => client.outbox.drain({ timeLimitMs: limit });
  const sync = async (lastChance: boolean) => {
    const result = await drain();
    if (result.pending === 0) return;
    if (lastChance)
      return void (await (scope.registration as SyncRegistration | undefined)?.sync?.register(
        OUTBOX_SYNC_TAG,
      ));
    throw new FailwiseError(
      `failwise: ${result.pending} outbox entries still pending (${result.reason ?? 'unknown'}); the browser fires this sync again later`,
    );
  };
  const onSync = (event: OutboxSyncEvent) => {
    if (event.tag === OUTBOX_SYNC_TAG) event.waitUntil(sync(event.lastChance === true));
  };
  const onPeriodicSync = (event: OutboxSyncEvent) => {
    if (event.tag === OUTBOX_SYNC_TAG) event.waitUntil(drain());
  };
  scope.addEventListener('sync', onSync);
  scope.addEventListener('periodicsync', onPeriodicSync);
  const started = drain();
  // A start drain that fails (the client closed first) is the app's to see through `started`, never unhandled.
  started.catch(() => undefined);
  return {
    client,
    started,
    drain,
    async close() {
      scope.removeEventListener('sync', onSync);
      scope.removeEventListener('periodicsync', onPeriodicSync);
      await client.close();
    },
  };
}
