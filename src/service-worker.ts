// The `failwise/service-worker` entry: the outbox drained in a browser's service worker, on Background Sync
// events and at the worker's start (docs/durable.md, "Sent while the app is closed").
export { serviceWorkerOutbox, SERVICE_WORKER_DRAIN_LIMIT_MS } from './runtime/service-worker-outbox.js';
export type {
  OutboxSyncEvent,
  ServiceWorkerOutbox,
  ServiceWorkerOutboxOptions,
  ServiceWorkerScope,
} from './runtime/service-worker-outbox.js';
export { OUTBOX_SYNC_TAG } from './runtime/background-sync.js';
