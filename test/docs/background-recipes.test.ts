// The React Native background recipes of docs/recipes.md ("React Native: sending while the app is closed") must
// work as pasted. Each ```ts block is type-checked with the app's `api.ts` (the React Native recipe) against
// failwise's sources, as Metro resolves imports, with the published types of expo-background-task,
// expo-task-manager, react-native-background-fetch and React Native's AppRegistry (the members the recipes use).
// Then each runs on stand-ins of those modules (test/helpers/react-native-stand-ins.ts): the app queues a sync
// while offline and is closed; a background launch over the same AsyncStorage loads the recipe, the stand-in
// plays the OS starting the task, and the task must end only once the stored write has been sent, once, to a
// real server on 127.0.0.1 and removed from the storage.
import { afterEach, describe, expect, it } from 'vitest';
import type { FailoverClient } from '../../src/runtime/create-failover-client.js';
import { blocks, declarations, recipeModules, swap, typeCheck } from '../helpers/doc-recipes.js';
import { closedPort, useLoopback } from '../helpers/loopback-server.js';
import {
  standIns,
  type AppStateStandIn,
  type BackgroundFetchStandIn,
  type ExpoBackgroundTaskStandIn,
  type ExpoTaskManagerStandIn,
  type NetInfoStandIn,
} from '../helpers/react-native-stand-ins.js';

const [api = ''] = blocks('A React Native app');
const [expoTask = '', backgroundFetch = '', headlessJs = ''] = blocks(
  'React Native: sending while the app is closed',
);

/** The published types of the background modules, the members the recipes use. */
const backgroundDeclarations = `
declare module 'expo-task-manager' {
  export interface TaskManagerTaskBody<T = unknown> {
    data: T;
    error: { code: string | number; message: string } | null;
    executionInfo: { appState?: 'active' | 'background' | 'inactive'; eventId: string; taskName: string };
  }
  export type TaskManagerTaskExecutor<T = any> = (body: TaskManagerTaskBody<T>) => Promise<any>;
  export function defineTask<T = unknown>(taskName: string, taskExecutor: TaskManagerTaskExecutor<T>): void;
}
declare module 'expo-background-task' {
  export enum BackgroundTaskStatus { Restricted = 1, Available = 2 }
  export enum BackgroundTaskResult { Success = 1, Failed = 2 }
  export type BackgroundTaskOptions = { minimumInterval?: number };
  export function registerTaskAsync(taskName: string, options?: BackgroundTaskOptions): Promise<void>;
}
declare module 'react-native-background-fetch' {
  type NetworkType = 0 | 1 | 2 | 3 | 4;
  type BackgroundFetchStatus = 0 | 1 | 2;
  export interface BackgroundFetchConfig {
    minimumFetchInterval?: number;
    stopOnTerminate?: boolean;
    startOnBoot?: boolean;
    enableHeadless?: boolean;
    requiredNetworkType?: NetworkType;
  }
  export interface HeadlessEvent { taskId: string; timeout: boolean }
  export default class BackgroundFetch {
    static NETWORK_TYPE_ANY: NetworkType;
    static configure(
      config: BackgroundFetchConfig,
      onEvent: (taskId: string) => void,
      onTimeout?: (taskId: string) => void,
    ): Promise<BackgroundFetchStatus>;
    static finish(taskId?: string): void;
    static registerHeadlessTask(task: (event: HeadlessEvent) => void): void;
  }
}
declare module 'react-native' {
  type Task = (taskData: any) => Promise<void>;
  type TaskProvider = () => Task;
  export const AppRegistry: { registerHeadlessTask(taskKey: string, taskProvider: TaskProvider): void };
}
`;

describe('the React Native background recipes of docs/recipes.md', () => {
  it('are three blocks: expo-background-task, react-native-background-fetch and Headless JS', () => {
    expect([expoTask, backgroundFetch, headlessJs].map((code) => /from '([^']+)'/.exec(code)?.[1])).toEqual([
      'expo-background-task',
      'react-native-background-fetch',
      'react-native',
    ]);
  });

  it('type-check as written, with the app api.ts they import, as Metro resolves them', () => {
    const { errors } = typeCheck(
      {
        'api.ts': api,
        '__recipe-outbox-task.ts': expoTask,
        '__recipe-outbox-fetch.ts': backgroundFetch,
        '__recipe-outbox-headless.ts': headlessJs,
        '__third-party.d.ts': declarations + backgroundDeclarations,
      },
      'src/index.ts',
      true,
    );
    expect(errors).toEqual([]);
  }, 60_000);
});

const { write: writeModule } = recipeModules('background');

interface AppModule {
  api: FailoverClient;
  queueSync(changes: readonly object[]): Promise<'synced' | 'queued' | 'refused'>;
  shutdown(): Promise<void>;
}

describe('the React Native background recipes, run on stand-ins of their native modules', () => {
  const loopback = useLoopback();
  const clients: FailoverClient[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
  });

  /** The phone: one AsyncStorage, shared by the app and its background launches. */
  async function phone() {
    const asyncStorage = writeModule(standIns.asyncStorage);
    const disk = ((await import(asyncStorage)) as { values: Map<string, string> }).values;
    /** The app's api.ts, a fresh copy (a new runtime) against `url`; `offline` makes NetInfo say so. */
    const app = async (url: string, offline: boolean) => {
      const netInfo = writeModule(standIns.netInfo);
      if (offline)
        ((await import(netInfo)) as NetInfoStandIn).report({
          type: 'none',
          isConnected: false,
          isInternetReachable: false,
        });
      const reactNative = writeModule(standIns.appState);
      let code = swap(api, `url: 'https://api.example.com'`, `url: '${url}', allowInsecure: true`);
      for (const [from, to] of [
        [`'@react-native-async-storage/async-storage'`, asyncStorage],
        [`'@react-native-community/netinfo'`, netInfo],
        [`'react-native'`, reactNative],
        [`'react-native-random-uuid'`, writeModule(standIns.uuid)],
      ] as const)
        code = swap(code, from, JSON.stringify(to));
      const path = writeModule(code);
      const loaded = (await import(path)) as AppModule;
      clients.push(loaded.api);
      return { path, module: loaded, reactNative };
    };
    return { disk, app };
  }

  /** A sync queued on the phone while offline, by an app that is then closed: what the entry looks like stored. */
  async function queuedOffline(phoneOf: Awaited<ReturnType<typeof phone>>) {
    const first = await phoneOf.app(`http://127.0.0.1:${await closedPort()}`, true);
    expect(await first.module.queueSync([{ note: 7 }])).toBe('queued');
    await first.module.shutdown();
    const keys = [...phoneOf.disk.keys()].filter((key) => key.startsWith('failwise-outbox:entry:'));
    expect(keys).toHaveLength(1);
    return JSON.parse(phoneOf.disk.get(keys[0]!)!) as { idempotencyKey: string };
  }

  /**
   * A server that counts what arrives and answers after 300 ms, so that a task that ended before its send did
   * leaves the entry stored; and a check that the task sent the stored write, once, and removed it.
   */
  async function origin() {
    const server = await loopback.serve(({ res }) => void setTimeout(() => res.writeHead(200).end(), 300));
    const sentOnce = (stored: { idempotencyKey: string }, disk: Map<string, string>) => {
      expect(server.requests.map((request) => [request.method, request.url, request.body])).toEqual([
        ['POST', '/v1/sync', JSON.stringify({ changes: [{ note: 7 }] })],
      ]);
      expect(server.requests[0]!.headers['idempotency-key']).toBe(stored.idempotencyKey);
      expect([...disk.keys()]).toEqual(['failwise-outbox:index']);
    };
    return { server, sentOnce };
  }

  it('expo-background-task: the task sends the stored write before it reports success', async () => {
    const device = await phone();
    const stored = await queuedOffline(device);
    const { server, sentOnce } = await origin();
    const background = await device.app(server.url, false);
    const taskManager = writeModule(standIns.expoTaskManager);
    const backgroundTask = writeModule(standIns.expoBackgroundTask);
    let code = swap(expoTask, `'./api'`, JSON.stringify(background.path));
    code = swap(code, `'expo-task-manager'`, JSON.stringify(taskManager));
    code = swap(code, `'expo-background-task'`, JSON.stringify(backgroundTask));
    const recipe = (await import(writeModule(code))) as { scheduleOutbox(): Promise<void> };
    const os = (await import(taskManager)) as ExpoTaskManagerStandIn;
    const expo = (await import(backgroundTask)) as ExpoBackgroundTaskStandIn;
    await recipe.scheduleOutbox();
    expect([...expo.registered]).toEqual([['failwise-outbox', { minimumInterval: 15 }]]);

    const result = await os.run('failwise-outbox');
    sentOnce(stored, device.disk);
    expect(result).toBe(expo.BackgroundTaskResult.Success);
    // Nothing left to send: a second launch sends nothing and still succeeds.
    expect(await os.run('failwise-outbox')).toBe(expo.BackgroundTaskResult.Success);
    expect(server.requests).toHaveLength(1);
  });

  it('react-native-background-fetch: the event sends the stored write, then finishes its task id', async () => {
    const device = await phone();
    const stored = await queuedOffline(device);
    const { server, sentOnce } = await origin();
    const background = await device.app(server.url, false);
    const fetchModule = writeModule(standIns.backgroundFetch);
    let code = swap(backgroundFetch, `'./api'`, JSON.stringify(background.path));
    code = swap(code, `'react-native-background-fetch'`, JSON.stringify(fetchModule));
    const recipe = (await import(writeModule(code))) as { configureOutboxFetch(): Promise<number> };
    const os = (await import(fetchModule)) as BackgroundFetchStandIn;
    await recipe.configureOutboxFetch();
    expect(os.config).toEqual({ minimumFetchInterval: 15, stopOnTerminate: false, enableHeadless: true });

    os.fire('react-native-background-fetch');
    await until(() => os.finished.length > 0);
    expect(os.finished).toEqual(['react-native-background-fetch']);
    sentOnce(stored, device.disk);
    // Out of time: the app says it is done at once.
    os.expire('late-task');
    expect(os.finished).toEqual(['react-native-background-fetch', 'late-task']);
  });

  it('react-native-background-fetch headless: sends, then finishes; an event that timed out finishes at once', async () => {
    const device = await phone();
    const stored = await queuedOffline(device);
    const { server, sentOnce } = await origin();
    const background = await device.app(server.url, false);
    const fetchModule = writeModule(standIns.backgroundFetch);
    let code = swap(backgroundFetch, `'./api'`, JSON.stringify(background.path));
    code = swap(code, `'react-native-background-fetch'`, JSON.stringify(fetchModule));
    await import(writeModule(code));
    const os = (await import(fetchModule)) as BackgroundFetchStandIn;

    await os.fireHeadless({ taskId: 'timed-out', timeout: true });
    expect(os.finished).toEqual(['timed-out']);
    await os.fireHeadless({ taskId: 'headless', timeout: false });
    expect(os.finished).toEqual(['timed-out', 'headless']);
    sentOnce(stored, device.disk);
  });

  it('Headless JS: the registered task sends the stored write before it resolves', async () => {
    const device = await phone();
    const stored = await queuedOffline(device);
    const { server, sentOnce } = await origin();
    const background = await device.app(server.url, false);
    let code = swap(headlessJs, `'./api'`, JSON.stringify(background.path));
    code = swap(code, `'react-native'`, JSON.stringify(background.reactNative));
    await import(writeModule(code));
    const registry = (await import(background.reactNative)) as AppStateStandIn;
    const provider = registry.headlessTasks.get('FailwiseOutbox');
    expect(provider).toBeTypeOf('function');
    await provider!()({});
    sentOnce(stored, device.disk);
  });
});

/** Waits (on real time: the recipes run on the system clock, against a real server) until `done`, at most 5 s. */
async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 10) {
    if (waited > 5_000) throw new Error('timed out waiting for the background task to finish');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
