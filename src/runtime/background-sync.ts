/** The Background Sync tag a page registers after each durable write, and the service worker drains on. */
export const OUTBOX_SYNC_TAG = 'failwise-outbox';

/** The part of a `ServiceWorkerRegistration` Background Sync adds (`registration.sync`), where it exists. */
export interface SyncRegistration {
  sync?: { register(tag: string): Promise<void> } | undefined;
}

/** The page's `navigator.serviceWorker`, where it exists: only what is used. */
interface ServiceWorkerContainerLike {
  getRegistration(): Promise<SyncRegistration | undefined>;
}

/**
 * Asks the browser for a `sync` event (`OUTBOX_SYNC_TAG`) in the service worker that controls this page: it fires
 * once the network is back, even if every page is closed by then. Quietly does nothing where there is no service
 * worker or no Background Sync (Firefox, Safari), and when the browser refuses: pages and the worker's start
 * still send. Never throws or rejects; nothing waits for it.
 */
export function registerOutboxSync(): void {
  const container = (globalThis as { navigator?: { serviceWorker?: ServiceWorkerContainerLike } }).navigator
    ?.serviceWorker;
  if (typeof container?.getRegistration !== 'function') return;
  container
    .getRegistration()
    .then((registration) => registration?.sync?.register(OUTBOX_SYNC_TAG))
    .catch(() => undefined);
}
