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
}
