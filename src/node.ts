// The `failwise/node` entry: Node-only parts (node:http/https, and SQLite through the optional peer
// better-sqlite3, loaded only when a sqliteStore is first used; PostgreSQL through the optional peer pg).
export { nodeHttpTransport } from './transports/node-http-transport.js';
export type { NodeHttpTransportOptions } from './transports/node-http-transport.js';

export { sqliteStore } from './stores/sqlite-store.js';
export type { SqliteStoreOptions } from './stores/sqlite-store.js';

export { postgresStore } from './stores/postgres-store.js';
export type { PostgresPool, PostgresPoolClient, PostgresStoreOptions } from './stores/postgres-store.js';
