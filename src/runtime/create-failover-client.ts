import type { Clock } from '../clock/clock.js';
import { fetchTransport } from '../transports/fetch-transport.js';
import type { Transport } from '../transports/transport.js';
import type { FailoverClientOptions } from './client-options.js';
import type { FailoverClient } from './failover-client.js';
import { FailwiseClient } from './failwise-client.js';

export type { ClientOutbox, FailoverClient, FetchInit } from './failover-client.js';

/**
 * Creates a client that runs every request through the request machine (failwise-client.ts). Throws
 * `PolicyError` synchronously, naming every bad option by path.
 */
export const createFailoverClient = /* @__PURE__ */ createClientFactory((clock) => fetchTransport({ clock }));

/**
 * `createFailoverClient` with its default transport: each package entry binds its own (the Node entry
 * passes a fetch transport that reads undici's error codes; browsers do not ship that code).
 */
export function createClientFactory(defaultTransport: (clock: Clock) => Transport) {
  return (options: FailoverClientOptions): FailoverClient => new FailwiseClient(options, defaultTransport);
}
