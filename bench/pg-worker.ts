// One worker of bench/pg-throughput.ts, in a process of its own (its own event loop, as each machine of a
// fleet has): a failwise client on a postgresStore. It prints `ready` once its store is open, waits for `go`
// on stdin, creates its client and starts its outbox (from then on it sends by itself, as a service's does), and when told
// `stop` prints `done <entries it sent> <its claims by answer, its heldElsewhere and gone calls, and its CPU time since go, as JSON>` and exits.
import { createInterface } from 'node:readline';
import { writeSync } from 'node:fs';
import { createFailoverClient } from '../src/index.node.js';
import { nodeHttpTransport, postgresStore } from '../src/node.js';

async function main(): Promise<void> {
  const [url, connection, schema, concurrency] = process.argv.slice(2);
  if (!url || !connection || !schema || !concurrency)
    throw new Error('usage: pg-worker <origin-url> <connection-string> <schema> <concurrency>');
  const store = postgresStore(connection, { schema });
  let sent = 0;
  // Claims asked of the store, whatever they answered: the cost of sharing one queue (1 per entry when alone),
  // by answer, and the calls a runner makes to skip what others hold or finished.
  const calls: Record<string, number> = {};
  const count = (what: string) => (calls[what] = (calls[what] ?? 0) + 1);
  const { claims } = store;
  const claim = claims.claim.bind(claims);
  const heldElsewhere = claims.heldElsewhere.bind(claims);
  const gone = claims.gone.bind(claims);
  claims.claim = async (request) => {
    const answer = await claim(request);
    count(answer.status);
    return answer;
  };
  claims.heldElsewhere = (owner, now) => (count('heldElsewhere'), heldElsewhere(owner, now));
  claims.gone = (ids) => (count('gone'), gone(ids));
  await store.list(); // opened, its tables there: the timed part is sending only
  // The client loads durable work with import() when it is created: loaded (and, under tsx, compiled) now, so the
  // timed part does not include compiling it, once per worker.
  await import('../src/runtime/durable-work.js');
  writeSync(1, 'ready\n');
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  /** Resolves at the line `word`, or when stdin ends (the parent is gone). */
  const until = async (word: string) => {
    for (;;) {
      const { value, done } = await lines.next();
      if (done || value === word) return;
    }
  };
  await until('go');
  const cpuAtGo = process.cpuUsage();
  // Created now: a client's outbox starts reading its store, and sending, as soon as it exists.
  const client = createFailoverClient({
    origins: [{ id: 'origin', url, allowInsecure: true }],
    store,
    transport: nodeHttpTransport(),
    policy: { durable: { order: 'per-key', concurrency: Number(concurrency) } },
    onEvent: (event) => {
      if (event.type === 'outbox-changed' && event.change === 'entry-sent') sent += 1;
    },
  });
  void client.outbox.flush();
  await until('stop');
  const cpu = process.cpuUsage(cpuAtGo);
  calls['cpuMs'] = Math.round((cpu.user + cpu.system) / 1000);
  writeSync(1, `done ${sent} ${JSON.stringify(calls)}\n`);
  await client.close();
  process.exit(0);
}

await main();
