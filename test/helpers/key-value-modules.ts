import type { Clock } from '../../src/clock/clock.js';

/**
 * In-memory stand-ins for React Native's key-value modules, with the members and the semantics of the real ones
 * (their published types: `@react-native-async-storage/async-storage`'s `AsyncStorageStatic` and v3
 * `AsyncStorage`; `react-native-mmkv`'s `MMKV` in v3 and v4), over a `Device`: what the phone's disk keeps. A new
 * module object over the same device is a restart of the app (a new JavaScript runtime). The device can fail a
 * write (`failWrite`), or die at one (`crashAtWrite`: that write and every later call fail, as nothing runs after
 * the process is killed), to test what a store leaves behind.
 */

/** What the phone's storage keeps, and the faults it plays. */
export class Device {
  readonly values = new Map<string, string>();
  /** Writes (sets and removes) so far, counting from 1. */
  writes = 0;
  /** The write with this number throws, and nothing else does. */
  failWrite: number | undefined;
  /** The process dies at the write with this number: it is not made, and every later call throws. */
  crashAtWrite: number | undefined;
  dead = false;

  /** Called by the modules before every read. */
  beforeRead(): void {
    if (this.dead) throw new Error('the app was killed');
  }

  /** Called by the modules before every write: decides whether it is made. */
  beforeWrite(): void {
    if (this.dead) throw new Error('the app was killed');
    this.writes += 1;
    if (this.writes === this.crashAtWrite) {
      this.dead = true;
      throw new Error('the app was killed');
    }
    if (this.writes === this.failWrite) throw new Error('SQLITE_FULL: database or disk is full');
  }

  /** The app starts again: the disk is as the last write left it. */
  restart(): void {
    this.dead = false;
    this.crashAtWrite = undefined;
    this.failWrite = undefined;
  }
}

/** AsyncStorage (legacy default export, v1 and v2): every method answers with a promise; a missing key is null. */
export function fakeAsyncStorage(device: Device) {
  return {
    getItem: async (key: string): Promise<string | null> => {
      device.beforeRead();
      return device.values.get(key) ?? null;
    },
    setItem: async (key: string, value: string): Promise<void> => {
      device.beforeWrite();
      device.values.set(key, value);
    },
    removeItem: async (key: string): Promise<void> => {
      device.beforeWrite();
      device.values.delete(key);
    },
    getAllKeys: async (): Promise<readonly string[]> => {
      device.beforeRead();
      return [...device.values.keys()];
    },
    multiGet: async (keys: readonly string[]): Promise<readonly [string, string | null][]> => {
      device.beforeRead();
      return keys.map((key) => [key, device.values.get(key) ?? null]);
    },
    clear: async (): Promise<void> => {
      device.beforeWrite();
      device.values.clear();
    },
  };
}

/**
 * An MMKV instance: synchronous, a missing key is `undefined`; `version` 3 has `delete(key)`, 4 has
 * `remove(key)` returning whether there was one. `this` matters, as in the real class.
 */
export function fakeMmkv(device: Device, version: 3 | 4) {
  class Mmkv {
    readonly id = 'mmkv.default';
    getString(key: string): string | undefined {
      device.beforeRead();
      return device.values.get(key);
    }
    set(key: string, value: boolean | string | number | ArrayBuffer): void {
      if (key === '') throw new Error('Cannot set a value for an empty key!');
      if (this.id !== 'mmkv.default') throw new Error('called without its instance');
      device.beforeWrite();
      // The store writes strings only; MMKV keeps other types apart, which getString would not return.
      if (typeof value !== 'string') throw new Error('this stand-in keeps strings only');
      device.values.set(key, value);
    }
    contains(key: string): boolean {
      device.beforeRead();
      return device.values.has(key);
    }
    getAllKeys(): string[] {
      device.beforeRead();
      return [...device.values.keys()];
    }
    clearAll(): void {
      device.beforeWrite();
      device.values.clear();
    }
  }
  class MmkvV3 extends Mmkv {
    delete(key: string): void {
      device.beforeWrite();
      device.values.delete(key);
    }
  }
  class MmkvV4 extends Mmkv {
    remove(key: string): boolean {
      device.beforeWrite();
      return device.values.delete(key);
    }
  }
  return version === 3 ? new MmkvV3() : new MmkvV4();
}

/**
 * AsyncStorage whose every call takes time on `clock`: it is made (read or written, at once and whole) `delay()`
 * ms after it is asked, and answers then, as a call that waits its turn behind other work on the native side.
 * Two of them over one device are two runtimes whose calls interleave.
 */
export function slowAsyncStorage(device: Device, clock: Clock, delay: () => number) {
  const later = <T>(fn: () => T) =>
    new Promise<void>((resolve) => clock.setTimeout(() => resolve(), delay())).then(fn);
  return {
    getItem: (key: string): Promise<string | null> =>
      later(() => {
        device.beforeRead();
        return device.values.get(key) ?? null;
      }),
    setItem: (key: string, value: string): Promise<void> =>
      later(() => {
        device.beforeWrite();
        device.values.set(key, value);
      }),
    removeItem: (key: string): Promise<void> =>
      later(() => {
        device.beforeWrite();
        device.values.delete(key);
      }),
  };
}
