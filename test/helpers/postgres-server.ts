/**
 * A real PostgreSQL server for a test file or a script: Debian's `postgresql` package (installed by
 * .ci/run where missing), `initdb` into a fresh temporary folder, a free loopback port, its unix socket in
 * that folder, and no password (trust, loopback only). Postgres refuses to run as root, so as root (CI) it
 * runs as `nobody` through util-linux's `setpriv`.
 *
 * It stops by itself: `stop()` (call it in afterAll), and if this process dies first (a crash, a SIGKILL)
 * the server still goes, because it runs under a small shell that waits on a pipe from this process and
 * shuts the server down when the pipe closes, which the OS does for a dead process. No vitest here: the
 * crash soak and the benchmark use it with plain tsx.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PostgresServer {
  /** `postgres://failwise@127.0.0.1:<port>/<database>`; no password. */
  url(database?: string): string;
  port: number;
  /** Creates a database on this server (each test file or trial may take its own). */
  createDatabase(name: string): Promise<void>;
  /** Shuts the server down and removes its folder; resolves once it is gone. Calling it twice is harmless. */
  stop(): Promise<void>;
}

/** The newest `/usr/lib/postgresql/<version>/bin` holding `postgres` and `initdb`, else the PATH's. */
export function findPostgresBin(): string {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, 'bin', 'postgres')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  const onPath = which.stdout.trim();
  if (which.status === 0 && onPath) return onPath.replace(/\/initdb$/, '');
  throw new Error(
    'PostgreSQL is not installed: install Debian\'s "postgresql" package (apt-get install postgresql); .ci/run does',
  );
}

/** A port no one listens on now (the OS picks it; a race with another process is possible but rare). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

const isRoot = () => process.getuid?.() === 0;

/** The command line that runs `args` as an unprivileged user when this process is root. */
function unprivileged(args: string[]): string[] {
  return isRoot() ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', ...args] : args;
}

/** Runs a command to its end, throwing with its output when it fails. */
function run(args: string[], cwd: string): void {
  const [command, ...rest] = unprivileged(args);
  const result = spawnSync(command!, rest, { cwd, encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(`${args.join(' ')} failed (${result.status ?? result.signal}): ${result.stderr}`);
}

/** Starts a fresh server; rejects (and leaves nothing behind) when it is not ready within `readyMs`. */
export async function startPostgres(options: { readyMs?: number } = {}): Promise<PostgresServer> {
  const { readyMs = 30_000 } = options;
  const bin = findPostgresBin();
  const dir = mkdtempSync(join(tmpdir(), 'failwise-pg-'));
  const data = join(dir, 'data');
  const socket = join(dir, 'socket');
  mkdirSync(socket);
  if (isRoot()) {
    // The folder and everything in it belong to the user the server runs as.
    for (const path of [dir, socket]) chownSync(path, 65534, 65534);
  }
  chmodSync(dir, 0o700);
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let log = '';
  try {
    run([join(bin, 'initdb'), '-D', data, '-U', 'failwise', '--auth=trust', '-E', 'UTF8', '--no-sync'], dir);
    const port = await freePort();
    // fsync off: the tests kill workers, never the server, so a power-cut-safe server buys nothing here.
    const postgres = [
      join(bin, 'postgres'),
      '-D',
      data,
      '-h',
      '127.0.0.1',
      '-p',
      String(port),
      '-k',
      socket,
      '-c',
      'fsync=off',
      '-c',
      'max_connections=200',
    ];
    // `read` returns when stdin closes (stop(), or this process died): then a fast shutdown (SIGINT).
    // The folder goes with it, so a dead test process leaves nothing behind either.
    const script = 'dir=$1; shift; "$@" & pg=$!; read _; kill -INT $pg; wait $pg; rm -rf "$dir"';
    const [command, ...rest] = unprivileged(['sh', '-c', script, 'postgres', dir, ...postgres]);
    // Its own process group: a signal to this one's (Ctrl-C, a runner's timeout) does not cut the clean-up short;
    // the closed pipe stops it.
    const started = spawn(command!, rest, { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    child = started;
    exited = new Promise((resolve) => started.once('exit', () => resolve()));
    started.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    started.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    // The pipe and the child do not keep this process alive: it stops the server by exiting.
    started.unref();
    for (const stream of [started.stdin, started.stdout, started.stderr])
      (stream as unknown as { unref?: () => void } | null)?.unref?.();

    const deadline = Date.now() + readyMs;
    while (!log.includes('ready to accept connections')) {
      if (started.exitCode !== null) throw new Error(`postgres exited at start: ${log}`);
      if (Date.now() > deadline) throw new Error(`postgres was not ready within ${readyMs} ms: ${log}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    const url = (database = 'postgres') => `postgres://failwise@127.0.0.1:${port}/${database}`;
    let stopping: Promise<void> | undefined;
    return {
      url,
      port,
      async createDatabase(name) {
        const { default: pg } = await import('pg');
        const client = new pg.Client({ connectionString: url() });
        await client.connect();
        try {
          await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
        } finally {
          await client.end();
        }
      },
      stop: () =>
        (stopping ??= (async () => {
          started.stdin?.end();
          const guard = setTimeout(() => started.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(guard);
          rmSync(dir, { recursive: true, force: true });
        })()),
    };
  } catch (error) {
    child?.stdin?.end();
    child?.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
