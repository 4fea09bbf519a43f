// The `failwise/browser` entry: browser-only parts (IndexedDB, navigator.onLine), and the transport
// browsers use, so that an app can take everything browser-specific from one place.
export { fetchTransport } from './transports/fetch-transport.js';

export { browserConnectivity } from './connectivity/browser-connectivity.js';
export type {
  BrowserConnectivityOptions,
  BrowserConnectivityTarget,
  ConnectivityEventTarget,
  ConnectivityNavigator,
} from './connectivity/browser-connectivity.js';

export { indexedDbStore } from './stores/indexeddb-store.js';
export type { IndexedDbStoreOptions } from './stores/indexeddb-store.js';
