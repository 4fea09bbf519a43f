// The `failwise` entry under Node (the package's `node` export condition): everything the universal
// entry has, with a fetch transport that reads undici's error codes to tell failure phases apart.
// Browsers and React Native resolve src/index.ts and never ship those tables.
import { createClientFactory } from './runtime/create-failover-client.js';
import { undiciFetchTransport } from './transports/undici-fetch-errors.js';

export * from './index.js';

/** `fetchTransport` for Node: global fetch (undici), with exact failure phases from its error codes. */
export const fetchTransport = undiciFetchTransport;

/** `createFailoverClient` whose default transport is Node's `fetchTransport`. */
export const createFailoverClient = /* @__PURE__ */ createClientFactory((clock) =>
  undiciFetchTransport({ clock }),
);
