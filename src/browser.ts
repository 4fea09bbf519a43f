// The `failwise/browser` entry: browser-only parts. `indexedDbStore` and `browserConnectivity` arrive
// with the outbox; until then this entry holds the transport browsers use, so that imports written
// for it today keep working.
export { fetchTransport } from './transports/fetch-transport.js';
