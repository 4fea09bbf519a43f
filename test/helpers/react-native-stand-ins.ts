// Stand-ins for React Native's modules, as module sources a test writes to a file and imports (each file is one
// instance, with its own state): React Native cannot run in Node, so docs recipes that import these run with them.
// Each has the members the recipes use, with the behaviour the modules document.

/**
 * Stand-ins for the React Native recipe's third-party modules, with the members it uses and their documented
 * behaviour: AsyncStorage over a Map (what the phone's disk keeps: shared by every start of the app in a test),
 * NetInfo whose `report` plays the native side (a listener is called with the current state when it is added,
 * and `refresh()` reports again), AppState whose `set` plays the app going to the background and back, and
 * react-native-random-uuid, whose polyfill Node does not need.
 */
export const standIns = {
  asyncStorage: `
export const values = new Map<string, string>();
export default {
  getItem: async (key: string) => values.get(key) ?? null,
  setItem: async (key: string, value: string) => void values.set(key, value),
  removeItem: async (key: string) => void values.delete(key),
};
`,
  netInfo: `
type State = { type: string; isConnected: boolean | null; isInternetReachable: boolean | null };
const listeners = new Set<(state: State) => void>();
let state: State = { type: 'unknown', isConnected: null, isInternetReachable: null };
export const calls = { refresh: 0 };
export const listening = () => listeners.size;
export function report(next: State) {
  state = next;
  for (const listener of [...listeners]) listener(state);
}
export default {
  addEventListener(listener: (state: State) => void) {
    listeners.add(listener);
    queueMicrotask(() => listeners.has(listener) && listener(state));
    return () => void listeners.delete(listener);
  },
  async refresh() {
    calls.refresh++;
    report(state);
    return state;
  },
};
`,
  appState: `
const listeners = new Set<(state: string) => void>();
export const listening = () => listeners.size;
export const AppState = {
  currentState: 'active',
  addEventListener(type: 'change', listener: (state: string) => void) {
    listeners.add(listener);
    return { remove: () => void listeners.delete(listener) };
  },
};
export function set(state: string) {
  AppState.currentState = state;
  for (const listener of [...listeners]) listener(state);
}
// Headless JS: the native service starts a task by its key; the provider gives the function to run.
export const headlessTasks = new Map<string, () => (data: unknown) => Promise<void>>();
export const AppRegistry = {
  registerHeadlessTask(key: string, provider: () => (data: unknown) => Promise<void>) {
    headlessTasks.set(key, provider);
  },
};
`,
  /** expo-task-manager: `defineTask` keeps the executor; `run` plays the OS launching the task by its name. */
  expoTaskManager: `
type Body = { data: unknown; error: null; executionInfo: { eventId: string; taskName: string } };
const tasks = new Map<string, (body: Body) => Promise<unknown>>();
export function defineTask(taskName: string, executor: (body: Body) => Promise<unknown>) {
  if (!taskName || typeof taskName !== 'string') throw new TypeError('\`taskName\` must be a non-empty string.');
  tasks.set(taskName, executor);
}
export function isTaskDefined(taskName: string) {
  return tasks.has(taskName);
}
let events = 0;
export function run(taskName: string) {
  const executor = tasks.get(taskName);
  if (!executor) throw new Error(\`no task named \${taskName}\`);
  return executor({ data: {}, error: null, executionInfo: { eventId: String(++events), taskName } });
}
`,
  /** expo-background-task: its enums as published, and the registrations the app asked for. */
  expoBackgroundTask: `
export enum BackgroundTaskStatus { Restricted = 1, Available = 2 }
export enum BackgroundTaskResult { Success = 1, Failed = 2 }
export const registered = new Map<string, { minimumInterval?: number }>();
export async function registerTaskAsync(taskName: string, options: { minimumInterval?: number } = {}) {
  registered.set(taskName, options);
}
`,
  /**
   * react-native-background-fetch: `configure` keeps its callbacks, `registerHeadlessTask` its task; `fire`,
   * `expire` and `fireHeadless` play the OS; `finished` lists the task ids the app said it was done with.
   */
  backgroundFetch: `
type Config = { minimumFetchInterval?: number; stopOnTerminate?: boolean; enableHeadless?: boolean };
let onEvent: ((taskId: string) => void) | undefined;
let onTimeout: ((taskId: string) => void) | undefined;
let headless: ((event: { taskId: string; timeout: boolean }) => unknown) | undefined;
export const finished: string[] = [];
export let config: Config | undefined;
export default class BackgroundFetch {
  static STATUS_RESTRICTED = 0;
  static STATUS_DENIED = 1;
  static STATUS_AVAILABLE = 2;
  static async configure(given: Config, event: (taskId: string) => void, timeout?: (taskId: string) => void) {
    config = given;
    onEvent = event;
    onTimeout = timeout;
    return BackgroundFetch.STATUS_AVAILABLE;
  }
  static finish(taskId?: string) {
    finished.push(taskId ?? '');
  }
  static registerHeadlessTask(task: (event: { taskId: string; timeout: boolean }) => unknown) {
    headless = task;
  }
}
export const fire = (taskId: string) => onEvent!(taskId);
export const expire = (taskId: string) => onTimeout!(taskId);
export const fireHeadless = (event: { taskId: string; timeout: boolean }) => headless!(event);
`,
  uuid: `export {};\n`,
};

/** What a test drives on the NetInfo stand-in. */
export interface NetInfoStandIn {
  report(state: { type: string; isConnected: boolean | null; isInternetReachable: boolean | null }): void;
  calls: { refresh: number };
  listening(): number;
}
export interface AppStateStandIn {
  set(state: string): void;
  listening(): number;
  headlessTasks: Map<string, () => (data: unknown) => Promise<void>>;
}
export interface ExpoTaskManagerStandIn {
  run(taskName: string): Promise<unknown>;
  isTaskDefined(taskName: string): boolean;
}
export interface ExpoBackgroundTaskStandIn {
  BackgroundTaskResult: { Success: number; Failed: number };
  registered: Map<string, { minimumInterval?: number }>;
}
export interface BackgroundFetchStandIn {
  finished: string[];
  config: { minimumFetchInterval?: number; stopOnTerminate?: boolean; enableHeadless?: boolean } | undefined;
  fire(taskId: string): void;
  expire(taskId: string): void;
  fireHeadless(event: { taskId: string; timeout: boolean }): unknown;
}
