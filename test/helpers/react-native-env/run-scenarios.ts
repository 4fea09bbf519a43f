/**
 * Runs failwise's React Native scenarios in this process and prints what each observed, as one JSON line
 * (`ScenarioFacts`). Run as a child process by test/react-native/react-native-fetch.test.ts:
 * `node --import tsx run-scenarios.ts <environment> <servers as JSON>`. With `react-native` (0.87 and later) or
 * `react-native-before-0.87` (0.70 to 0.86: another `AbortController`), the globals are made that React Native's
 * first (react-native-globals.ts), and failwise is imported only after, from its default entry (src/index.ts,
 * which Metro's `react-native` condition picks); with `node`, Node's own fetch is the control.
 * Every scenario bounds itself with its own signal or the client's timeouts; the servers are the parent's.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { standIns, type NetInfoStandIn } from '../react-native-stand-ins.js';
import { installReactNativeGlobals } from './react-native-globals.js';
import {
  SCENARIO_ENVIRONMENTS,
  type ScenarioEnvironment,
  type ScenarioFacts,
  type ScenarioServers,
  type Settled,
} from './scenario-facts.js';

const [env, serversJson] = process.argv.slice(2);
if (!SCENARIO_ENVIRONMENTS.includes(env as ScenarioEnvironment))
  throw new Error(`run-scenarios: unknown environment ${env}`);
const servers = JSON.parse(serversJson ?? '') as ScenarioServers;
if (env === 'react-native') await installReactNativeGlobals('current');
else if (env === 'react-native-before-0.87') await installReactNativeGlobals('before-0.87');

const { createFailoverClient, fetchTransport } = await import('../../../src/index.js');
const { keyValueStore, netInfoConnectivity } = await import('../../../src/react-native.js');
const { queryDefaults } = await import('../../../src/tanstack-query.js');
const { QueryClient } = await import('@tanstack/query-core');

/** Every id and key from a counter: React Native has no `crypto.randomUUID` (docs/recipes.md). */
let keys = 0;
const generateIdempotencyKey = () => `key-${++keys}`;
const { primary, backup, deadPort } = servers;

function client(policy: Record<string, unknown> = {}, more: Record<string, unknown> = {}) {
  return createFailoverClient({
    origins: [{ id: 'primary', url: primary, allowInsecure: true }],
    generateIdempotencyKey,
    policy,
    ...more,
  });
}

/** What a promise ended with, as plain data: an error by name and field, and whether it is `aborted`'s reason. */
async function settle<T>(promise: Promise<T>, aborted?: AbortSignal): Promise<Settled<T>> {
  try {
    return { value: await promise };
  } catch (error) {
    const e = error as { name?: unknown; message?: unknown; field?: unknown };
    return {
      error: {
        name: String(e.name),
        message: String(e.message),
        isError: error instanceof Error,
        ...(typeof e.field === 'string' ? { field: e.field } : {}),
        ...(aborted === undefined ? {} : { isReason: error === aborted.reason }),
      },
    };
  }
}

/** A signal that aborts after `ms` with a `TimeoutError` reason, as `AbortSignal.timeout()` does where it exists. */
function timeoutSignal(ms: number): AbortSignal {
  if (typeof AbortSignal.timeout === 'function') return AbortSignal.timeout(ms);
  // React Native's AbortController before 0.87 takes no reason: the signal is given one as a newer one would.
  const controller = new AbortController();
  const reason = Object.assign(new Error('The operation timed out.'), { name: 'TimeoutError' });
  Object.defineProperty(controller.signal, 'reason', { value: reason, configurable: true });
  setTimeout(() => controller.abort(), ms);
  return controller.signal;
}

const facts = {} as ScenarioFacts;
const api = client();
const signal = () => new AbortController().signal;

// A gzip'd JSON without Content-Length, with a signal, three times: each succeeds and the primary stays healthy.
facts.gzipJson = [];
for (let i = 0; i < 3; i++)
  facts.gzipJson.push(
    await settle(api.fetch(`${primary}/gzip-json`, { signal: signal() }).then((r) => r.json())),
  );
facts.healthAfterGzip = api.health().state;

facts.bigBody = await settle(
  api.fetch(`${primary}/big`, { signal: signal() }).then(async (r) => (await r.text()).length),
);
facts.trickle = await settle(api.fetch(`${primary}/trickle`, { signal: signal() }).then((r) => r.text()));

// stream: true: handed over at its headers where the runtime streams; otherwise read within the attempt.
facts.streamTrue = await settle(
  api
    .fetch(`${primary}/trickle`, { signal: signal(), stream: true })
    .then(async (r) => ({ bodyType: r.body === null ? 'null' : typeof r.body, text: await r.text() })),
);
const shortAttempt = client({ attempts: { max: 1 }, timeouts: { attemptMs: 300 } });
facts.streamShortAttempt = await settle(
  shortAttempt.request({ path: '/trickle', stream: true, signal: signal() }).then(async (outcome) => ({
    status: outcome.status,
    failureClass: outcome.status === 'failed' ? outcome.failure?.class : undefined,
    text: outcome.status === 'succeeded' ? await outcome.response.text() : undefined,
  })),
);
await shortAttempt.close();

// Cancellation: a plain abort, and a signal with a TimeoutError reason.
const controller = new AbortController();
setTimeout(() => controller.abort(), 50);
facts.abort = await settle(api.fetch(`${primary}/hang`, { signal: controller.signal }), controller.signal);
const timeout = timeoutSignal(50);
facts.timeoutAbort = await settle(api.fetch(`${primary}/hang`, { signal: timeout }), timeout);

// A Request as input.
const echo = (r: Response) => r.json() as Promise<unknown>;
facts.requestGet = await settle(api.fetch(new Request(`${primary}/echo?q=1`)).then(echo));
facts.requestPost = await settle(
  api
    .fetch(
      new Request(`${primary}/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"a":1}',
      }),
      { idempotent: true },
    )
    .then(echo),
);
const form = new FormData();
form.append('name', 'value');
facts.formData = await settle(
  api.fetch(`${primary}/echo`, { method: 'POST', body: form, idempotent: true }).then((r) => r.status),
);

// An 'auto' idempotency key from a client given no generateIdempotencyKey: crypto.randomUUID or a clear refusal.
const keyless = createFailoverClient({ origins: [{ id: 'primary', url: primary, allowInsecure: true }] });
facts.autoKey = await settle(
  keyless
    .fetch('/echo', { method: 'POST', body: 'x', idempotencyKey: 'auto', signal: signal() })
    .then((r) => r.status),
);
await keyless.close();

// Origin URLs in another case: the app's fetch reaches the host on 127.0.0.1 (as DNS would).
const upperPort = new URL(primary).port;
const seenUrls: string[] = [];
facts.upperCaseOrigin = await settle(
  (async () => {
    const upper = createFailoverClient({
      origins: [{ id: 'primary', url: `HTTP://API.Example.TEST:${upperPort}`, allowInsecure: true }],
      generateIdempotencyKey,
      transport: fetchTransport({
        // fetchTransport calls fetch with the attempt's URL as a string.
        fetch: (input, init) => {
          const url = input as string;
          seenUrls.push(url);
          return fetch(url.replace('api.example.test', '127.0.0.1'), init);
        },
      }),
    });
    try {
      return await upper.fetch(`http://API.EXAMPLE.test:${upperPort}/echo`, { signal: signal() }).then(echo);
    } finally {
      await upper.close();
    }
  })(),
);
facts.upperCaseUrls = seenUrls;

// Failover: the primary refuses connections, the backup answers.
facts.failover = await settle(
  (async () => {
    const failover = createFailoverClient({
      origins: [
        { id: 'primary', url: `http://127.0.0.1:${deadPort}`, allowInsecure: true },
        { id: 'backup', url: backup, allowInsecure: true },
      ],
      generateIdempotencyKey,
      policy: { health: { failoverAfter: 1 }, backoff: { initialMs: 1, maxMs: 5 } },
    });
    try {
      const text = await failover.fetch(`/origin`, { signal: signal() }).then((r) => r.text());
      return { text, active: failover.health().activeOrigin };
    } finally {
      await failover.close();
    }
  })(),
);

// A cached read: the second is answered from the cache once the server fails.
const cachedPath = `/cached?env=${env}`;
facts.cached = await settle(
  (async () => {
    const outcomes = [];
    for (let i = 0; i < 2; i++) {
      const outcome = await api.request({ path: cachedPath, lifetime: 'cached', signal: signal() });
      outcomes.push(
        outcome.status === 'succeeded'
          ? { status: outcome.status, stale: outcome.stale === true, text: await outcome.response.text() }
          : { status: outcome.status },
      );
    }
    return outcomes;
  })(),
);

// Durable work on keyValueStore with netInfoConnectivity: queued while offline, sent once back online.
const dir = await mkdtemp(join(tmpdir(), 'failwise-rn-'));
try {
  const module = async (name: string, source: string) => {
    const file = join(dir, `${name}.ts`);
    await writeFile(file, source);
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  };
  const storage = (await module('async-storage', standIns.asyncStorage)).default;
  const netInfoModule = await module('netinfo', standIns.netInfo);
  const netInfo = netInfoModule as unknown as NetInfoStandIn;
  netInfo.report({ type: 'none', isConnected: false, isInternetReachable: false });
  facts.durable = await settle(
    (async () => {
      const durable = client(
        {},
        {
          store: keyValueStore(storage as Parameters<typeof keyValueStore>[0]),
          connectivity: netInfoConnectivity(
            netInfoModule.default as Parameters<typeof netInfoConnectivity>[0],
          ),
        },
      );
      const queued = await settle(
        durable.request({
          method: 'POST',
          path: '/echo',
          headers: { 'content-type': 'application/json' },
          body: '{"sync":true}',
          lifetime: 'durable',
        }),
      );
      const queuedAs = 'value' in queued ? queued.value.status : queued;
      netInfo.report({ type: 'wifi', isConnected: true, isInternetReachable: true });
      const { sent, failed, pending } = await durable.outbox.flush();
      const left = await durable.outbox.size();
      await durable.close();
      return { queued: queuedAs, flushed: { sent, failed, pending }, left };
    })(),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}

// TanStack Query passes a signal to every query.
const queryClient = new QueryClient({ defaultOptions: queryDefaults(api) });
facts.tanstack = await settle(
  queryClient.fetchQuery({
    queryKey: ['gzip'],
    queryFn: ({ signal: querySignal }) =>
      api.fetch(`${primary}/gzip-json`, { signal: querySignal }).then((r) => r.json() as Promise<unknown>),
  }),
);
queryClient.clear();

await api.close();
console.log(JSON.stringify(facts));
