import { ArgumentError } from '../errors/argument-error.js';

/**
 * A key-value module of AsyncStorage's shape: `@react-native-async-storage/async-storage` (v1 to v3, and
 * `createAsyncStorage(name)`), Expo's `expo-sqlite/kv-store`, or a browser's `localStorage`. Each method may
 * answer at once or with a promise. Pass the module itself: failwise depends on none of them.
 */
export interface AsyncStorageLike {
  /** The string stored under `key`; `null` (or `undefined`) when there is none. */
  getItem(key: string): string | null | undefined | Promise<string | null | undefined>;
  /** Stores `value` under `key`, all or nothing, before it resolves. */
  setItem(key: string, value: string): unknown;
  removeItem(key: string): unknown;
}

/**
 * A `react-native-mmkv` instance (`new MMKV()` in v2 and v3, `createMMKV()` in v4): synchronous; v4 renamed
 * `delete` to `remove`, and either is used.
 */
export interface MmkvLike {
  /** The string stored under `key`, `undefined` when there is none. */
  getString(key: string): string | undefined;
  set(key: string, value: string): void;
  /** v2, v3. */
  delete?(key: string): void;
  /** v4. */
  remove?(key: string): unknown;
}

/** What `keyValueStore` takes: either shape. */
export type KeyValueStorage = AsyncStorageLike | MmkvLike;

/**
 * The three operations the store needs, the same for both shapes: always a promise, a synchronous throw included.
 * @internal
 */
export interface KeyValueOps {
  read(key: string): Promise<string | undefined>;
  write(key: string, value: string): Promise<void>;
  erase(key: string): Promise<void>;
}

const isFunction = (value: unknown): value is (...args: never[]) => unknown => typeof value === 'function';

/** Runs `fn`, turning a synchronous throw into a rejection. */
const attempt = <T>(fn: () => T | Promise<T>): Promise<T> => new Promise<T>((resolve) => resolve(fn()));

/**
 * `storage` as `KeyValueOps`, its methods called on it (MMKV's and AsyncStorage's need their `this`). Throws an
 * ArgumentError naming both accepted shapes when it is neither.
 * @internal
 */
export function keyValueOps(who: string, storage: unknown): KeyValueOps {
  const value = storage as Partial<AsyncStorageLike & MmkvLike> | null | undefined;
  if (
    isFunction(value?.getString) &&
    isFunction(value.set) &&
    (isFunction(value.remove) || isFunction(value.delete))
  ) {
    const mmkv = value as MmkvLike;
    return {
      read: (key) => attempt(() => mmkv.getString(key) ?? undefined),
      write: (key, text) => attempt(() => mmkv.set(key, text)),
      erase: (key) =>
        attempt(() => {
          if (typeof mmkv.remove === 'function') mmkv.remove(key);
          else mmkv.delete!(key);
        }),
    };
  }
  if (isFunction(value?.getItem) && isFunction(value.setItem) && isFunction(value.removeItem)) {
    const kv = value as AsyncStorageLike;
    return {
      read: async (key) => (await attempt(() => kv.getItem(key))) ?? undefined,
      write: async (key, text) => void (await attempt(() => kv.setItem(key, text))),
      erase: async (key) => void (await attempt(() => kv.removeItem(key))),
    };
  }
  throw new ArgumentError(
    who,
    'storage',
    'expected AsyncStorage (getItem, setItem, removeItem) or an MMKV instance (getString, set, remove or delete)',
  );
}
