// The `failwise/node` entry: Node-only parts (node:http/https). `sqliteStore` arrives with the outbox.
export { nodeHttpTransport } from './transports/node-http-transport.js';
export type { NodeHttpTransportOptions } from './transports/node-http-transport.js';
