import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ArgumentError } from '../../src/errors/argument-error.js';

import { FailwiseError } from '../../src/errors/failwise-error.js';
import { sqliteStore } from '../../src/stores/sqlite-store.js';
import type { OutboxStore } from '../../src/stores/outbox-store.js';
import { describeOutboxStore, makeEntry } from './store-contract.js';

const freshDir = () => mkdtempSync(join(tmpdir(), 'failwise-sqlite-'));

describeOutboxStore('sqliteStore', async () => {
  const dir = freshDir();
  const path = join(dir, 'outbox.db');
  return {
    store: sqliteStore(path),
    reopen: async () => sqliteStore(path),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

describe('sqliteStore', () => {
  let dir: string;
  let path: string;
  const opened: OutboxStore[] = [];
  /** A store on this test's file, closed after the test. */
  const open = (...args: Parameters<typeof sqliteStore>) => {
    const store = sqliteStore(...args);
    opened.push(store);
    return store;
  };

  beforeEach(() => {
    dir = freshDir();
    path = join(dir, 'outbox.db');
  });

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `fn` on the file with better-sqlite3 itself, as another program reading it would. */
  function inspect<T>(fn: (db: Database.Database) => T): T {
    const db = new Database(path, { fileMustExist: true });
    try {
      return fn(db);
    } finally {
      db.close();
    }
  }

  describe('the file', () => {
    it('is in WAL mode and records its schema version', async () => {
      await open(path).list();
      expect(inspect((db) => db.pragma('journal_mode', { simple: true }))).toBe('wal');
      expect(inspect((db) => db.prepare('SELECT id, version FROM failwise_schema').all())).toEqual([
        { id: 1, version: 1 },
      ]);
    });

    it('syncs every commit (synchronous = FULL), waits busyTimeoutMs for another writer, and never waits for the lease lock', async () => {
      // Both settings belong to the connection, not the file: read them on the store's own connection.
      const connections: Database.Database[] = [];
      const store = open(path, {
        busyTimeoutMs: 1_234,
        loadDriver: async () => ({
          default: function (...args: ConstructorParameters<typeof Database>) {
            const db = new Database(...args);
            connections.push(db);
            return db;
          },
        }),
      });
      await store.list();
      expect(connections.map((db) => db.name)).toEqual([path, `${path}-lease`]);
      const [db, lock] = connections;
      expect(db!.pragma('synchronous', { simple: true })).toBe(2); // 2 is FULL
      expect(db!.pragma('busy_timeout', { simple: true })).toBe(1_234);
      expect(db!.pragma('journal_mode', { simple: true })).toBe('wal');
      // The lease's lock connection never waits: a lock held elsewhere means a live holder, at once.
      expect(lock!.pragma('busy_timeout', { simple: true })).toBe(0);
    });

    it('keeps a string body as TEXT and a Uint8Array body as a BLOB, and no body as NULL', async () => {
      const store = open(path);
      const request = makeEntry('x').request;
      await store.add(makeEntry('text', { request: { ...request, body: 'abc' } }));
      await store.add(makeEntry('bytes', { request: { ...request, body: new Uint8Array([1, 2]) } }));
      await store.add(makeEntry('none', { request: { ...request, body: undefined } }));
      const rows = inspect((db) =>
        db.prepare('SELECT id, typeof(body) AS kind, entry FROM failwise_outbox ORDER BY seq').all(),
      ) as { id: string; kind: string; entry: string }[];
      expect(rows.map(({ id, kind }) => [id, kind])).toEqual([
        ['text', 'text'],
        ['bytes', 'blob'],
        ['none', 'null'],
      ]);
      // The body lives in its own column only.
      expect(JSON.parse(rows[0]!.entry).request).toEqual({
        method: 'POST',
        path: '/v1/orders?ref=x',
        headers: { 'content-type': 'application/json' },
      });
    });

    it('keeps the lease in one row that names its owner and expiry', async () => {
      const store = open(path);
      expect(await store.acquireLease('one', 1_000, 250)).toBe(true);
      expect(inspect((db) => db.prepare('SELECT id, owner, expires_at FROM failwise_lease').all())).toEqual([
        { id: 1, owner: 'one', expires_at: 1_250 },
      ]);
      await store.releaseLease('one');
      expect(inspect((db) => db.prepare('SELECT * FROM failwise_lease').all())).toEqual([]);
    });

    it('refuses the lease to a second store on the file while the first holds it, at any time, until it is given back', async () => {
      const first = open(path);
      const second = open(path);
      expect(await first.acquireLease('one', 1_000, 0)).toBe(true);
      // Past the row's expiry too: the first store's lock says its holder is alive.
      expect(await second.acquireLease('two', 1_000, 5_000)).toBe(false);
      expect(await first.acquireLease('one', 1_000, 5_000)).toBe(true);
      await first.releaseLease('one');
      expect(await second.acquireLease('two', 1_000, 5_001)).toBe(true);
      expect(await first.acquireLease('one', 1_000, 5_002)).toBe(false);
      // Closing a store frees its lease, as a closed tab frees its Web Lock.
      await second.close();
      expect(await first.acquireLease('one', 1_000, 5_003)).toBe(true);
    });

    it.each([
      [1, true, 2],
      [3, false, 3],
    ] as const)(
      'asks again for a lease lock refused %i time(s) in a row, as when another process was taking it that instant: granted %s after %i tries',
      async (refusals, granted, tries) => {
        let asked = 0;
        const store = open(path, {
          loadDriver: async () => ({
            default: function (...args: ConstructorParameters<typeof Database>) {
              const db = new Database(...args);
              if (db.name === `${path}-lease`) {
                // The lock's connection finds the lock busy `refusals` times, as SQLite says it (SQLITE_BUSY).
                const exec = db.exec.bind(db);
                db.exec = (sql: string) => {
                  if (sql !== 'BEGIN EXCLUSIVE') return exec(sql);
                  if (++asked <= refusals)
                    throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
                  return exec(sql);
                };
              }
              return db;
            },
          }),
        });
        expect(await store.acquireLease('one', 1_000, 0)).toBe(granted);
        expect(asked).toBe(tries);
      },
    );

    it('takes over a lease row left by a holder whose lock is gone, before the row expires', async () => {
      // A row written as a crashed process leaves it: an unexpired owner, and no process holding the lock.
      await open(path).list();
      inspect((db) =>
        db.prepare("INSERT INTO failwise_lease (id, owner, expires_at) VALUES (1, 'dead', 1000000)").run(),
      );
      expect(await open(path).acquireLease('alive', 1_000, 10)).toBe(true);
      expect(inspect((db) => db.prepare('SELECT owner, expires_at FROM failwise_lease').all())).toEqual([
        { owner: 'alive', expires_at: 1_010 },
      ]);
    });

    it('opens the file again after a failed open, instead of keeping the failure', async () => {
      const later = join(dir, 'not-yet', 'outbox.db');
      const store = open(later);
      await expect(store.list()).rejects.toThrow(
        new RegExp(
          `^sqliteStore: cannot open ${JSON.stringify(later).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`,
        ),
      );
      mkdirSync(join(dir, 'not-yet'));
      await store.add(makeEntry('a'));
      expect((await store.list()).map((entry) => entry.id)).toEqual(['a']);
    });

    it('refuses a file written by a newer schema version, and leaves it as it was', async () => {
      await open(path).add(makeEntry('a'));
      inspect((db) => db.prepare('UPDATE failwise_schema SET version = 2').run());
      const store = open(path);
      await expect(store.list()).rejects.toThrow(FailwiseError);
      await expect(store.list()).rejects.toThrow(
        `sqliteStore: ${JSON.stringify(path)} has schema version 2, written by a newer failwise; this one reads version 1`,
      );
      expect(inspect((db) => db.prepare('SELECT count(*) AS n FROM failwise_outbox').get())).toEqual({
        n: 1,
      });
    });

    it('rejects with the path when the file cannot be opened', async () => {
      const missing = join(dir, 'no-such-dir', 'outbox.db');
      const store = open(missing);
      await expect(store.add(makeEntry('a'))).rejects.toThrow(FailwiseError);
      await expect(store.add(makeEntry('a'))).rejects.toThrow(
        new RegExp(`^sqliteStore: cannot open ${JSON.stringify(missing)}: `),
      );
    });

    it('opens ":memory:" as a private, empty store', async () => {
      const store = open(':memory:');
      await store.add(makeEntry('a'));
      expect((await store.list()).map((entry) => entry.id)).toEqual(['a']);
      expect(await open(':memory:').list()).toEqual([]);
    });
  });

  describe('loading better-sqlite3', () => {
    it('rejects the first call with how to install better-sqlite3 when it is missing', async () => {
      const missing = Object.assign(new Error("Cannot find package 'better-sqlite3'"), {
        code: 'ERR_MODULE_NOT_FOUND',
      });
      const store = open(path, { loadDriver: () => Promise.reject(missing) });
      const error = await store.list().catch((rejection: unknown) => rejection);
      expect(error).toBeInstanceOf(FailwiseError);
      expect((error as Error).message).toBe(
        'sqliteStore needs better-sqlite3, an optional peer dependency that is not installed: npm install better-sqlite3@12',
      );
      expect((error as Error).cause).toBe(missing);
    });

    it('rejects with the loader error when better-sqlite3 is there but fails to load', async () => {
      const broken = new Error('The module was compiled against a different Node.js version');
      const store = open(path, { loadDriver: () => Promise.reject(broken) });
      await expect(store.list()).rejects.toThrow(
        'sqliteStore: could not load better-sqlite3: The module was compiled against a different Node.js version',
      );
    });

    it('does not load better-sqlite3 until the first call', async () => {
      let loads = 0;
      const store = open(path, {
        loadDriver: () => {
          loads += 1;
          return import('better-sqlite3');
        },
      });
      expect(loads).toBe(0);
      await store.list();
      await store.list();
      expect(loads).toBe(1);
    });
  });

  describe('options', () => {
    it('throws an ArgumentError for a path that is not a non-empty string', () => {
      expect(() => sqliteStore('')).toThrow(
        new ArgumentError('sqliteStore', 'path', 'expected a file path (a non-empty string), got string'),
      );
      expect(() => sqliteStore(undefined as unknown as string)).toThrow(/got undefined/);
    });

    it('throws an ArgumentError for a busy timeout that is not an integer >= 0', () => {
      expect(() => sqliteStore(path, { busyTimeoutMs: -1 })).toThrow(
        new ArgumentError('sqliteStore', 'options.busyTimeoutMs', 'expected an integer >= 0, got -1'),
      );
    });
  });
});

const contender = fileURLToPath(new URL('../fixtures/sqlite-lease-contender.ts', import.meta.url));

interface Contender {
  /** Resolves once the child has opened the store. */
  ready: Promise<void>;
  go(): void;
  /** Resolves with what the child printed after `go`. */
  answer: Promise<{ owner: string; acquired: boolean }>;
  /** Ends the child: `exit` lets it exit (without closing its store), `kill` SIGKILLs it. Resolves once it is gone. */
  end(how: 'exit' | 'kill'): Promise<void>;
}

/** Starts the fixture in a fresh Node process; it is killed if it has not exited after `limitMs`. */
function startContender(path: string, owner: string, limitMs: number): Contender {
  const child = spawn(process.execPath, ['--import', 'tsx', contender, path, owner], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let markReady: () => void = () => {};
  let answered: (line: string) => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const answer = new Promise<string>((resolve) => (answered = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.startsWith('ready\n')) markReady();
    // The second line, once whole (a chunk may end mid-line).
    const lines = stdout.split('\n');
    if (lines.length > 2 && lines[1]) answered(lines[1]);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const guard = setTimeout(() => child.kill('SIGKILL'), limitMs);
  const exited = new Promise<void>((resolve) => {
    child.on('exit', (code, signal) => {
      clearTimeout(guard);
      markReady(); // a child that died before `ready` must not leave the test waiting
      // As JSON built by JSON.stringify: what the child printed may hold newlines and quotes.
      answered(
        JSON.stringify({ failed: `contender ${owner} exited with ${code ?? signal}: ${stdout} ${stderr}` }),
      );
      resolve();
    });
  });
  return {
    ready,
    go: () => child.stdin.write('go\n'),
    answer: answer.then((line) => {
      const parsed = JSON.parse(line) as { owner: string; acquired: boolean; failed?: string };
      if (parsed.failed) throw new Error(parsed.failed);
      return parsed;
    }),
    end: (how) => {
      if (how === 'kill') child.kill('SIGKILL');
      else child.stdin.end();
      return exited;
    },
  };
}

describe('sqliteStore shared by processes', () => {
  let dir: string;
  beforeEach(() => {
    dir = freshDir();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['a file one process created before', true, 'kill'],
    ['a new file both processes create', false, 'exit'],
  ] as const)(
    'grants the lease to exactly one of two live processes asking at once, and frees it when the holder dies, on %s',
    async (_, createFirst, death) => {
      const path = join(dir, 'outbox.db');
      if (createFirst) {
        const store = sqliteStore(path);
        await store.add(makeEntry('a'));
        await store.close();
      }
      const contenders = ['one', 'two'].map((owner) => startContender(path, owner, 15_000));
      try {
        await Promise.all(contenders.map((child) => child.ready));
        for (const child of contenders) child.go();
        const results = await Promise.all(contenders.map((child) => child.answer));

        expect(results.filter((result) => result.acquired)).toHaveLength(1);
        const winner = contenders[results.findIndex((result) => result.acquired)]!;
        const store = sqliteStore(path);
        try {
          // Both processes are alive: the winner's lease is refused to everyone else, even long after its time
          // to live (asked at 1 000 for 60 000 ms): a live holder keeps it.
          expect(await store.acquireLease('parent', 1_000, 1_000)).toBe(false);
          expect(await store.acquireLease('parent', 1_000, 10_000_000)).toBe(false);
          // The winner dies without giving the lease back: it is free at once, well before 61 000.
          await winner.end(death);
          expect(await store.acquireLease('parent', 1_000, 1_001)).toBe(true);
          if (createFirst) expect((await store.list()).map((entry) => entry.id)).toEqual(['a']);
        } finally {
          await store.close();
        }
      } finally {
        await Promise.all(contenders.map((child) => child.end('kill')));
      }
    },
  );
});
