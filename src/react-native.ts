// The `failwise/react-native` entry: React Native parts that take the app's own native modules as arguments, so
// that failwise depends on none of them (docs/connectivity.md, docs/stores.md).
export { netInfoConnectivity } from './connectivity/netinfo-connectivity.js';
export type {
  NetInfoConnectivityOptions,
  NetInfoLike,
  NetInfoStateLike,
} from './connectivity/netinfo-connectivity.js';
export { keyValueStore } from './stores/key-value-store.js';
export type { CorruptEntryReport, KeyValueStoreOptions } from './stores/key-value-store.js';
export type { AsyncStorageLike, KeyValueStorage, MmkvLike } from './stores/key-value-storage.js';
export type { OutboxEntry, OutboxStore } from './stores/outbox-store.js';
