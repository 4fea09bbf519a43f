import type BetterSqlite3 from 'better-sqlite3';
import { FailwiseError } from '../errors/failwise-error.js';
import type { OutboxEntry } from './outbox-store.js';

/** The layout this code reads and writes; a file with a higher number was written by a newer failwise. */
const SCHEMA_VERSION = 1;

const SCHEMA_V1 = `
  CREATE TABLE failwise_outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, -- insertion order; AUTOINCREMENT never reuses a removed seq
    id TEXT NOT NULL UNIQUE,
    entry TEXT NOT NULL,                   -- the entry as JSON, without request.body
    body BLOB                              -- request.body: TEXT for a string, BLOB for bytes, NULL for none
  );
  CREATE TABLE failwise_lease (
    id INTEGER PRIMARY KEY CHECK (id = 1), -- one row at most: one lease per file
    owner TEXT NOT NULL,
    expires_at REAL NOT NULL
  );
`;

// A column declared BLOB has no type affinity, so SQLite keeps each value's own storage class: a string
// body comes back as a string and bytes as bytes, which is how the body round-trips exactly.
export type Row = { entry: string; body: string | Uint8Array | null };

/** Creates the tables of a new file, or checks that an existing file's layout is one this code reads. */
export function migrate(db: BetterSqlite3.Database, path: string): void {
  // IMMEDIATE takes the write lock first, so two processes opening a new file do not both create it.
  db.transaction(() => {
    db.exec(
      'CREATE TABLE IF NOT EXISTS failwise_schema (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)',
    );
    const row = db.prepare<[], { version: number }>('SELECT version FROM failwise_schema WHERE id = 1').get();
    if (row === undefined) {
      db.exec(SCHEMA_V1);
      db.prepare('INSERT INTO failwise_schema (id, version) VALUES (1, ?)').run(SCHEMA_VERSION);
    } else if (row.version > SCHEMA_VERSION) {
      throw new FailwiseError(
        `sqliteStore: ${JSON.stringify(path)} has schema version ${row.version}, written by a newer failwise; this one reads version ${SCHEMA_VERSION}`,
      );
    }
    // Later versions add their upgrades here, from row.version up, in this same transaction.
  }).immediate();
}

/** The entry as stored: JSON without the body, and the body in its own column. */
export function toRow(entry: OutboxEntry): [string, string | Uint8Array | null] {
  const { body, ...request } = entry.request;
  return [JSON.stringify({ ...entry, request }), body ?? null];
}

export function fromRow({ entry, body }: Row): OutboxEntry {
  const parsed = JSON.parse(entry) as OutboxEntry;
  // better-sqlite3 returns a Node Buffer; a plain Uint8Array copy is what was stored.
  if (body !== null) parsed.request.body = typeof body === 'string' ? body : new Uint8Array(body);
  return parsed;
}

type Statement<P extends unknown[], R = unknown> = BetterSqlite3.Statement<P, R>;
type Body = string | Uint8Array | null;

/** An open file with its statements prepared once. */
export interface Statements {
  db: BetterSqlite3.Database;
  add: Statement<[string, string, Body]>;
  update: Statement<[string, Body, string]>;
  remove: Statement<[string]>;
  get: Statement<[string], Row>;
  list: Statement<[], Row>;
  acquireLease: Statement<[{ owner: string; expiresAt: number; now: number }]>;
  takeLease: Statement<[{ owner: string; expiresAt: number }]>;
  releaseLease: Statement<[string]>;
}

export function prepare(db: BetterSqlite3.Database): Statements {
  return {
    db,
    // One statement each: SQLite runs every statement in its own transaction, so each change is atomic.
    add: db.prepare<[string, string, string | Uint8Array | null]>(
      'INSERT INTO failwise_outbox (id, entry, body) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING',
    ),
    update: db.prepare<[string, string | Uint8Array | null, string]>(
      'UPDATE failwise_outbox SET entry = ?, body = ? WHERE id = ?',
    ),
    remove: db.prepare<[string]>('DELETE FROM failwise_outbox WHERE id = ?'),
    get: db.prepare<[string], Row>('SELECT entry, body FROM failwise_outbox WHERE id = ?'),
    list: db.prepare<[], Row>('SELECT entry, body FROM failwise_outbox ORDER BY seq'),
    // Takes a free or expired lease, or renews our own, in one statement: of two processes racing here,
    // SQLite's write lock lets one run first, and the second then sees the first one's unexpired row.
    acquireLease: db.prepare<[{ owner: string; expiresAt: number; now: number }]>(`
      INSERT INTO failwise_lease (id, owner, expires_at) VALUES (1, @owner, @expiresAt)
      ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
      WHERE failwise_lease.owner = excluded.owner OR failwise_lease.expires_at <= @now
    `),
    // The lease is free (no live process holds the lock): whatever row is there was left by a holder that died.
    takeLease: db.prepare<[{ owner: string; expiresAt: number }]>(`
      INSERT INTO failwise_lease (id, owner, expires_at) VALUES (1, @owner, @expiresAt)
      ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
    `),
    releaseLease: db.prepare<[string]>('DELETE FROM failwise_lease WHERE id = 1 AND owner = ?'),
  };
}
