import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArgumentError } from '../../src/errors/argument-error.js';
import { FailwiseError } from '../../src/errors/failwise-error.js';
import { postgresStore } from '../../src/stores/postgres-store.js';
import type { ClaimRequest, OutboxStore } from '../../src/stores/outbox-store.js';
import { startPostgres, type PostgresServer } from '../helpers/postgres-server.js';
import { describeOutboxStore, makeEntry } from './store-contract.js';

let server: PostgresServer;
/** The pool the tests inspect the database with, as another program would. */
let admin: pg.Pool;
let schemas = 0;

beforeAll(async () => {
  server = await startPostgres();
  admin = new pg.Pool({ connectionString: server.url() });
  // An idle connection ended by the server (it stops after the tests) is pg's to drop, not a test failure.
  admin.on('error', () => undefined);
}, 60_000);

afterAll(async () => {
  await admin?.end();
  await server?.stop();
});

/** A schema no test used before: each contract test starts on an empty store. */
const freshSchema = () => `contract_${++schemas}`;

describeOutboxStore('postgresStore', async () => {
  const schema = freshSchema();
  const url = server.url();
  return {
    store: postgresStore(url, { schema }),
    reopen: async () => postgresStore(url, { schema }),
    cleanup: async () => void (await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)),
  };
});

/**
 * Ends the database sessions of `applicationName` as a crash of their process does (their connections close),
 * and waits until the server has ended them: pg_terminate_backend only signals the backend.
 */
async function killSessions(applicationName: string): Promise<void> {
  const { rows } = await admin.query(
    'SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
    [applicationName],
  );
  const pids = (rows as Array<{ pid: number }>).map((row) => row.pid);
  expect(pids.length).toBeGreaterThan(0);
  await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids]);
  // Gone, and their locks with them.
  const left = `SELECT (SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1))
                     + (SELECT count(*) FROM pg_locks WHERE pid = ANY($1)) AS n`;
  for (let waited = 0; ; waited += 20) {
    const {
      rows: [row],
    } = await admin.query(left, [pids]);
    if (Number((row as { n: string }).n) === 0) return;
    if (waited > 10_000) throw new Error(`the sessions of ${applicationName} did not end`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('postgresStore', () => {
  const opened: OutboxStore[] = [];
  /** A store in a fresh schema (or the one given), closed after the test. */
  function open(schema = freshSchema(), connection: string | pg.Pool = server.url()) {
    const store = postgresStore(connection, { schema });
    opened.push(store);
    return Object.assign(store, { schema });
  }
  const closeAll = async () => {
    for (const store of opened.splice(0)) await store.close();
  };

  describe('the database', () => {
    it('creates its tables in the schema the app chose, and records its schema version', async () => {
      const store = open('billing_outbox');
      await store.add(makeEntry('a'));
      const { rows } = await admin.query(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'billing_outbox' ORDER BY 1`,
      );
      expect(rows.map((row: { table_name: string }) => row.table_name)).toEqual([
        'lease',
        'outbox',
        'schema_version',
      ]);
      expect((await admin.query('SELECT id, version FROM billing_outbox.schema_version')).rows).toEqual([
        { id: 1, version: 1 },
      ]);
      await closeAll();
    });

    it('keeps a Uint8Array body as bytea and a string body in the entry JSON, NUL included', async () => {
      const store = open();
      const request = makeEntry('x').request;
      await store.add(makeEntry('bytes', { request: { ...request, body: new Uint8Array([0, 1, 255]) } }));
      await store.add(makeEntry('text', { request: { ...request, body: 'a\u0000b' } }));
      const { rows } = await admin.query(`SELECT id, body, entry FROM "${store.schema}".outbox ORDER BY seq`);
      expect([...(rows[0].body as Buffer)]).toEqual([0, 1, 255]);
      expect(JSON.parse(rows[0].entry).request.body).toBeUndefined();
      expect(rows[1].body).toBeNull();
      expect(JSON.parse(rows[1].entry).request.body).toBe('a\u0000b');
      await closeAll();
    });

    it('creates the tables once when several stores open a new schema at the same time', async () => {
      const schema = freshSchema();
      const stores = Array.from({ length: 4 }, () => open(schema));
      await Promise.all(stores.map((store, i) => store.add(makeEntry(`e${i}`))));
      expect((await stores[0]!.list()).map((entry) => entry.id).sort()).toEqual(['e0', 'e1', 'e2', 'e3']);
      await closeAll();
    });

    it('refuses a schema written by a newer version, and leaves it as it was', async () => {
      const first = open();
      await first.add(makeEntry('a'));
      await admin.query(`UPDATE "${first.schema}".schema_version SET version = 2`);
      const store = open(first.schema);
      await expect(store.list()).rejects.toThrow(FailwiseError);
      await expect(store.list()).rejects.toThrow(
        `postgresStore: schema "${first.schema}" has version 2, written by a newer failwise; this one reads version 1`,
      );
      expect((await admin.query(`SELECT count(*)::int AS n FROM "${first.schema}".outbox`)).rows).toEqual([
        { n: 1 },
      ]);
      await closeAll();
    });

    it('uses a pool the app gives it, keeps one connection of it while open, and does not end it on close', async () => {
      const pool = new pg.Pool({ connectionString: server.url(), max: 3 });
      try {
        const store = open(freshSchema(), pool);
        await store.add(makeEntry('a'));
        expect(pool.totalCount - pool.idleCount).toBe(1); // the session that keeps the store's lock
        await store.close();
        expect(pool.totalCount - pool.idleCount).toBe(0);
        expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      } finally {
        await pool.end();
      }
    });

    it('rejects with the call that failed when the server cannot be reached, and connects again later', async () => {
      const store = open(freshSchema(), `postgres://failwise@127.0.0.1:${server.port}/no_such_database`);
      await expect(store.list()).rejects.toThrow(
        /^postgresStore\.list: database "no_such_database" does not exist/,
      );
      await server.createDatabase('no_such_database');
      expect(await store.list()).toEqual([]);
      await closeAll();
    });
  });

  describe('a holder that is gone', () => {
    it('frees its lease at once, before the lease expires, when its session ends', async () => {
      const schema = freshSchema();
      const doomed = new pg.Pool({ connectionString: server.url(), application_name: 'doomed' });
      doomed.on('error', () => undefined);
      const dying = postgresStore(doomed, { schema });
      const alive = open(schema);
      try {
        expect(await dying.acquireLease('dying', 60_000, 0)).toBe(true);
        expect(await alive.acquireLease('alive', 60_000, 10)).toBe(false);
        await killSessions('doomed');
        expect(await alive.acquireLease('alive', 60_000, 20)).toBe(true);
      } finally {
        await closeAll();
        await dying.close().catch(() => undefined);
        await doomed.end();
      }
    });
  });

  describe('claims', () => {
    const claim = (
      store: ReturnType<typeof open>,
      id: string,
      owner: string,
      attempts: number,
      now: number,
      more: Partial<ClaimRequest> = {},
    ) =>
      store.claims.claim({
        id,
        owner,
        attempts,
        claimMs: 1_000,
        now,
        order: 'per-key',
        ignoreBackoff: false,
        ...more,
      });

    /** A claim's answer: the entry with that id as stored, its attempt counted. */
    const claimed = (id: string, attempts: number) => ({
      status: 'claimed',
      stored: expect.objectContaining({ id, attempts, status: 'pending' }),
    });

    it('claims an entry for one runner, counts its attempt, and refuses it to another until the claim ends', async () => {
      const one = open();
      const two = open(one.schema);
      await one.add(makeEntry('a', { nextAttemptAt: 0 }));
      // The answer is the entry as stored now, its attempt counted: the runner sends it without reading it again.
      expect(await claim(one, 'a', 'one', 1, 100)).toEqual({
        status: 'claimed',
        stored: makeEntry('a', { attempts: 1, nextAttemptAt: 0 }),
      });
      expect((await two.get('a'))?.attempts).toBe(1);
      // The other runner is told when to ask again, whether it knew the attempt counted (1) or not (0): while
      // the claim lasts the row is not its business, and its claim costs one answer, not a stale one and a retry.
      expect(await claim(two, 'a', 'two', 1, 200)).toEqual({ status: 'taken', until: 1_100 });
      expect(await claim(two, 'a', 'two', 2, 200)).toEqual({ status: 'taken', until: 1_100 });
      // Expired, the claim no longer hides the row: knowing attempts 0, the runner gets the stored entry.
      expect(await claim(two, 'a', 'two', 1, 1_100)).toEqual({
        status: 'stale',
        stored: makeEntry('a', { attempts: 1, nextAttemptAt: 0 }),
      });
      // Knowing 1, it may take it.
      expect(await claim(two, 'a', 'two', 2, 1_100)).toEqual(claimed('a', 2));
      // Renewed, it lasts; written (the send's outcome), it ends.
      await two.claims.renew('two', 1_000, 1_500);
      expect(await claim(one, 'a', 'one', 3, 2_400)).toEqual({ status: 'taken', until: 2_500 });
      await two.update(makeEntry('a', { attempts: 2, nextAttemptAt: 1_000 }));
      expect(await claim(one, 'a', 'one', 3, 2_400)).toEqual(claimed('a', 3));
      await one.claims.releaseAll('one');
      expect(await claim(two, 'a', 'two', 4, 2_401)).toEqual(claimed('a', 4));
      expect(await claim(two, 'gone', 'two', 1, 2_402)).toEqual({ status: 'missing' });
      await closeAll();
    });

    it('tells which of the ids asked about it no longer has, in the order asked', async () => {
      const store = open();
      await store.add(makeEntry('kept'));
      await store.add(makeEntry('sent'));
      await store.remove('sent');
      expect(await store.claims.gone(['never', 'kept', 'sent'])).toEqual(['never', 'sent']);
      expect(await store.claims.gone([])).toEqual([]);
      await expect(store.claims.gone(['kept', ''])).rejects.toThrow(ArgumentError);
      await expect(store.claims.gone('kept' as unknown as string[])).rejects.toThrow(
        /postgresStore\.claims\.gone: ids: expected an array of ids, got string/,
      );
      await closeAll();
    });

    it('adds an entry claimed by its writer: no other runner sends it before the writer keeps it', async () => {
      const writer = open();
      const other = open(writer.schema);
      await writer.claims.add(makeEntry('a', { nextAttemptAt: 0 }), 'writer', 1_000, 100);
      await expect(writer.claims.add(makeEntry('a'), 'writer', 1_000, 100)).rejects.toThrow(
        /"a" exists already/,
      );
      expect(await other.get('a')).toEqual(makeEntry('a', { nextAttemptAt: 0 }));
      expect(await claim(other, 'a', 'other', 1, 200)).toEqual({ status: 'taken', until: 1_100 });
      expect(await claim(writer, 'a', 'writer', 1, 200)).toEqual(claimed('a', 1));
      await closeAll();
    });

    it('lists the entries other live runners hold, with when their claims end', async () => {
      const one = open();
      for (const id of ['a', 'b', 'c']) await one.add(makeEntry(id, { nextAttemptAt: 0 }));
      await claim(one, 'a', 'one', 1, 100);
      await claim(one, 'b', 'two', 1, 200);
      expect(await one.claims.heldElsewhere('one', 300)).toEqual([{ id: 'b', until: 1_200 }]);
      expect(await one.claims.heldElsewhere('two', 300)).toEqual([{ id: 'a', until: 1_100 }]);
      // Expired claims are nobody's.
      expect(await one.claims.heldElsewhere('three', 1_150)).toEqual([{ id: 'b', until: 1_200 }]);
      await closeAll();
    });

    it('lets an entry be claimed only when no earlier entry of its orderKey is pending', async () => {
      const store = open();
      await store.add(makeEntry('k1', { orderKey: 'k' }));
      await store.add(makeEntry('free'));
      await store.add(makeEntry('other', { orderKey: 'j' }));
      await store.add(makeEntry('k2', { orderKey: 'k', nextAttemptAt: 0 }));
      // k1 is pending and due at 1000: k2 waits for it, entries of other keys or none do not.
      expect(await claim(store, 'k2', 'one', 1, 1_000)).toEqual({ status: 'taken', until: 1_000 });
      expect(await claim(store, 'free', 'one', 1, 1_000)).toEqual(claimed('free', 1));
      expect(await claim(store, 'other', 'one', 1, 1_000)).toEqual(claimed('other', 1));
      expect(await claim(store, 'k1', 'one', 1, 1_000)).toEqual(claimed('k1', 1));
      // Claimed, k1 still blocks until it is done: the answer says when its claim ends.
      expect(await claim(store, 'k2', 'two', 1, 1_500)).toEqual({ status: 'taken', until: 2_000 });
      await store.update(
        makeEntry('k1', { orderKey: 'k', attempts: 1, status: 'dead', deadReason: 'not-retryable' }),
      );
      expect(await claim(store, 'k2', 'two', 1, 1_600)).toEqual(claimed('k2', 1));
      // fifo: any earlier pending entry blocks.
      await store.add(makeEntry('last'));
      expect(await claim(store, 'last', 'two', 1, 1_700, { order: 'fifo' })).toEqual({
        status: 'taken',
        until: 2_000,
      });
      await closeAll();
    });

    it('keeps a backoff another runner stored, except for flush(), and a Retry-After even then', async () => {
      const store = open();
      await store.add(makeEntry('later', { nextAttemptAt: 5_000 }));
      const waited = makeEntry('server', {
        nextAttemptAt: 5_000,
        failures: [
          {
            class: 'rate-limited',
            requestSent: 'yes',
            origin: 'o',
            status: 429,
            retryAfterMs: 4_000,
            message: 'HTTP 429',
          },
        ],
      });
      await store.add(waited);
      expect(await claim(store, 'later', 'one', 1, 1_000)).toEqual({
        status: 'stale',
        stored: makeEntry('later', { nextAttemptAt: 5_000 }),
      });
      expect(await claim(store, 'later', 'one', 1, 1_000, { ignoreBackoff: true })).toEqual(
        claimed('later', 1),
      );
      expect(await claim(store, 'server', 'one', 1, 1_000, { ignoreBackoff: true })).toEqual({
        status: 'stale',
        stored: waited,
      });
      await closeAll();
    });

    it('answers taken at once, without waiting, while another transaction holds the row', async () => {
      const store = open();
      await store.add(makeEntry('a'));
      const locker = await admin.connect();
      try {
        await locker.query('BEGIN');
        await locker.query(`SELECT 1 FROM "${store.schema}".outbox WHERE id = 'a' FOR UPDATE`);
        expect(await claim(store, 'a', 'one', 1, 1_000)).toEqual({ status: 'taken', until: 1_000 });
      } finally {
        await locker.query('ROLLBACK');
        locker.release();
      }
      expect(await claim(store, 'a', 'one', 1, 1_000)).toEqual(claimed('a', 1));
      await closeAll();
    });

    it('frees the claims of a store whose session ended at once, before they expire', async () => {
      const schema = freshSchema();
      const doomed = new pg.Pool({ connectionString: server.url(), application_name: 'doomed-claims' });
      doomed.on('error', () => undefined);
      const dying = postgresStore(doomed, { schema });
      const alive = open(schema);
      try {
        await alive.add(makeEntry('a', { nextAttemptAt: 0 }));
        expect(
          await dying.claims.claim({
            id: 'a',
            owner: 'dying',
            attempts: 1,
            claimMs: 60_000,
            now: 0,
            order: 'fifo',
            ignoreBackoff: false,
          }),
        ).toEqual(claimed('a', 1));
        expect(await claim(alive, 'a', 'alive', 2, 10)).toEqual({ status: 'taken', until: 60_000 });
        await killSessions('doomed-claims');
        expect(await claim(alive, 'a', 'alive', 2, 20)).toEqual(claimed('a', 2));
      } finally {
        await closeAll();
        await dying.close().catch(() => undefined);
        await doomed.end();
      }
    });
  });

  describe('options', () => {
    it('throws an ArgumentError for a schema name that is not a plain identifier, and never runs it', async () => {
      for (const schema of ['public"; DROP TABLE x; --', 'Upper', '1abc', '', 'a'.repeat(64), 'with space']) {
        expect(() => postgresStore(server.url(), { schema })).toThrow(ArgumentError);
      }
      expect(() => postgresStore(server.url(), { schema: 'x"y' })).toThrow(
        new ArgumentError(
          'postgresStore',
          'options.schema',
          'expected a schema name of lower-case letters, digits and _ (not starting with a digit, at most 63), got "x\\"y"',
        ),
      );
    });

    it('throws an ArgumentError for a connection that is neither a pool nor a connection string', () => {
      expect(() => postgresStore('')).toThrow(
        new ArgumentError(
          'postgresStore',
          'connection',
          'expected a pg Pool or a connection string, got string',
        ),
      );
      expect(() => postgresStore({} as pg.Pool)).toThrow(/got object/);
      expect(() => postgresStore(null as unknown as string)).toThrow(/got null/);
    });

    it('rejects the first call with how to install pg when it is missing, and loads it only then', async () => {
      const missing = Object.assign(new Error("Cannot find package 'pg'"), { code: 'ERR_MODULE_NOT_FOUND' });
      let loads = 0;
      const store = postgresStore(server.url(), {
        loadDriver: () => {
          loads += 1;
          return Promise.reject(missing);
        },
      });
      expect(loads).toBe(0);
      const error = await store.list().catch((rejection: unknown) => rejection);
      expect(error).toBeInstanceOf(FailwiseError);
      expect((error as Error).message).toBe(
        'postgresStore needs pg, an optional peer dependency that is not installed: npm install pg@8',
      );
      expect(loads).toBe(1);
      await store.close();
    });
  });
});
