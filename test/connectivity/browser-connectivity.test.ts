import { describe, expect, it } from 'vitest';
import { browserConnectivity } from '../../src/connectivity/browser-connectivity.js';
import type { ConnectivityHint } from '../../src/connectivity/connectivity-source.js';
import { ArgumentError } from '../../src/errors/argument-error.js';

/** An EventTarget that counts the listeners on it by event type, as a test can't ask a real one. */
class CountingEventTarget extends EventTarget {
  private readonly listeners = new Map<string, Set<unknown>>();

  override addEventListener(type: string, listener: EventListenerOrEventListenerObject | null): void {
    super.addEventListener(type, listener);
    const set = this.listeners.get(type) ?? new Set();
    set.add(listener);
    this.listeners.set(type, set);
  }

  override removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null): void {
    super.removeEventListener(type, listener);
    this.listeners.get(type)?.delete(listener);
  }

  /** Listeners now on this target, by type (types with none left out). */
  counts(): Record<string, number> {
    return Object.fromEntries(
      [...this.listeners].filter(([, set]) => set.size > 0).map(([type, set]) => [type, set.size]),
    );
  }
}

/** A fake `window`: navigator.onLine, online/offline events, and optionally navigator.connection. */
class FakeWindow extends CountingEventTarget {
  readonly navigator: { onLine: boolean; connection?: CountingEventTarget };

  constructor(options: { onLine?: boolean; connection?: boolean } = {}) {
    super();
    this.navigator = { onLine: options.onLine ?? true };
    if (options.connection) this.navigator.connection = new CountingEventTarget();
  }

  /** What a browser does when the network goes: navigator.onLine first, then the event. */
  goOffline(): void {
    this.navigator.onLine = false;
    this.dispatchEvent(new Event('offline'));
  }

  goOnline(): void {
    this.navigator.onLine = true;
    this.dispatchEvent(new Event('online'));
  }

  switchNetwork(): void {
    this.navigator.connection?.dispatchEvent(new Event('change'));
  }
}

describe('browserConnectivity', () => {
  it('refuses options or a target that are not objects', () => {
    const make = browserConnectivity as (options: unknown) => unknown;
    expect(() => make(null)).toThrow(
      new ArgumentError('browserConnectivity', 'options', 'expected an object, got null'),
    );
    expect(() => make({ target: 'window' })).toThrow(
      new ArgumentError(
        'browserConnectivity',
        'options.target',
        'expected an object such as window or self, got "window"',
      ),
    );
    expect(() => make({ target: null })).toThrow(ArgumentError);
  });

  describe('current()', () => {
    it('is offline when navigator.onLine is false and online when it is true', () => {
      const target = new FakeWindow({ onLine: false });
      const source = browserConnectivity({ target });
      expect(source.current()).toBe('offline');
      target.navigator.onLine = true;
      expect(source.current()).toBe('online');
    });

    it('is unknown without a navigator, or with one that has no boolean onLine (React Native)', () => {
      expect(browserConnectivity({ target: {} }).current()).toBe('unknown');
      expect(browserConnectivity({ target: { navigator: {} } }).current()).toBe('unknown');
      const reactNative = { navigator: { product: 'ReactNative', onLine: undefined } };
      expect(browserConnectivity({ target: reactNative }).current()).toBe('unknown');
    });

    it('is unknown, never a throw, when reading navigator throws', () => {
      const hostile = {
        get navigator(): never {
          throw new Error('denied');
        },
      };
      expect(browserConnectivity({ target: hostile }).current()).toBe('unknown');
    });

    it('reads the global object by default (Node 20 has no navigator: unknown)', () => {
      const expected =
        typeof navigator === 'undefined' || typeof navigator.onLine !== 'boolean'
          ? 'unknown'
          : navigator.onLine
            ? 'online'
            : 'offline';
      expect(browserConnectivity().current()).toBe(expected);
    });
  });

  describe('subscribe()', () => {
    it('hints changed only when the connection type changes, where the browser reports one', () => {
      const target = new FakeWindow({ connection: true });
      const connection = Object.assign(target.navigator.connection!, { type: 'wifi' });
      const source = browserConnectivity({ target });
      const hints: ConnectivityHint[] = [];
      source.subscribe((hint) => hints.push(hint));

      // Chromium fires change when its bandwidth or latency estimate moves: the same Wi-Fi, not a new network.
      target.switchNetwork();
      connection.type = 'cellular';
      target.switchNetwork();
      target.switchNetwork();
      connection.type = 'wifi';
      target.switchNetwork();

      expect(hints).toEqual(['changed', 'changed']);
    });

    it('hints no changed where the connection reports no type (desktop Chromium): an estimate may have moved', () => {
      const target = new FakeWindow({ connection: true });
      const source = browserConnectivity({ target });
      const hints: ConnectivityHint[] = [];
      source.subscribe((hint) => hints.push(hint));

      target.switchNetwork();
      target.switchNetwork();

      expect(hints).toEqual([]);
    });

    it('hints offline and online from the window events, and changed from navigator.connection', () => {
      const target = new FakeWindow({ connection: true });
      const source = browserConnectivity({ target });
      const hints: ConnectivityHint[] = [];
      const states: string[] = [];
      source.subscribe((hint) => {
        hints.push(hint);
        states.push(source.current());
      });

      const connection = Object.assign(target.navigator.connection!, { type: 'wifi' });
      target.goOffline();
      connection.type = 'cellular';
      target.switchNetwork();
      target.goOnline();

      expect(hints).toEqual(['offline', 'changed', 'online']);
      expect(states).toEqual(['offline', 'offline', 'online']);
    });

    it('adds no listener until someone subscribes', () => {
      const target = new FakeWindow({ connection: true });
      const source = browserConnectivity({ target });
      source.current();
      expect(target.counts()).toEqual({});
      expect(target.navigator.connection?.counts()).toEqual({});
    });

    it('adds one set of listeners for any number of subscribers and removes them with the last', () => {
      const target = new FakeWindow({ connection: true });
      const source = browserConnectivity({ target });

      const first = source.subscribe(() => {});
      const second = source.subscribe(() => {});
      expect(target.counts()).toEqual({ online: 1, offline: 1 });
      expect(target.navigator.connection?.counts()).toEqual({ change: 1 });

      first();
      expect(target.counts()).toEqual({ online: 1, offline: 1 });
      second();
      expect(target.counts()).toEqual({});
      expect(target.navigator.connection?.counts()).toEqual({});
    });

    it('adds its listeners again for a subscriber after the last one left', () => {
      const target = new FakeWindow();
      const source = browserConnectivity({ target });
      source.subscribe(() => {})();

      const hints: ConnectivityHint[] = [];
      const unsubscribe = source.subscribe((hint) => hints.push(hint));
      target.goOffline();
      expect(hints).toEqual(['offline']);
      expect(target.counts()).toEqual({ online: 1, offline: 1 });

      unsubscribe();
      expect(target.counts()).toEqual({});
    });

    it('stops hinting a listener that unsubscribed; unsubscribing twice changes nothing', () => {
      const target = new FakeWindow();
      const source = browserConnectivity({ target });
      const left: ConnectivityHint[] = [];
      const stayed: ConnectivityHint[] = [];
      const unsubscribe = source.subscribe((hint) => left.push(hint));
      source.subscribe((hint) => stayed.push(hint));

      target.goOffline();
      unsubscribe();
      unsubscribe();
      target.goOnline();

      expect(left).toEqual(['offline']);
      expect(stayed).toEqual(['offline', 'online']);
      expect(target.counts()).toEqual({ online: 1, offline: 1 });
    });

    it('counts the same function subscribed twice as two subscriptions', () => {
      const target = new FakeWindow();
      const source = browserConnectivity({ target });
      const hints: ConnectivityHint[] = [];
      const listener = (hint: ConnectivityHint) => hints.push(hint);
      const first = source.subscribe(listener);
      const second = source.subscribe(listener);

      target.goOffline();
      first();
      target.goOnline();
      second();

      expect(hints).toEqual(['offline', 'offline', 'online']);
      expect(target.counts()).toEqual({});
    });

    it('does not hint a listener that another unsubscribed during the same hint', () => {
      const target = new FakeWindow();
      const source = browserConnectivity({ target });
      const hints: ConnectivityHint[] = [];
      source.subscribe(() => unsubscribeSecond());
      const unsubscribeSecond = source.subscribe((hint) => hints.push(hint));

      target.goOffline();

      expect(hints).toEqual([]);
    });

    it('still hints the other listeners when one throws', () => {
      const target = new FakeWindow();
      const source = browserConnectivity({ target });
      const before: ConnectivityHint[] = [];
      const after: ConnectivityHint[] = [];
      source.subscribe((hint) => before.push(hint));
      source.subscribe(() => {
        throw new Error('listener failed');
      });
      source.subscribe((hint) => after.push(hint));

      // Node reports an error thrown from an EventTarget listener as uncaught, which would fail this run.
      target.goOffline();
      target.goOnline();

      expect(before).toEqual(['offline', 'online']);
      expect(after).toEqual(['offline', 'online']);
    });

    it('subscribes and unsubscribes without error where there is nothing to listen to', () => {
      const source = browserConnectivity({ target: { navigator: { onLine: true } } });
      const unsubscribe = source.subscribe(() => {});
      expect(() => unsubscribe()).not.toThrow();
      expect(() => browserConnectivity().subscribe(() => {})()).not.toThrow();
    });

    it('removes the change listener from the connection it was added to, even if navigator.connection changed', () => {
      const target = new FakeWindow({ connection: true });
      const source = browserConnectivity({ target });
      const original = target.navigator.connection;
      const unsubscribe = source.subscribe(() => {});
      target.navigator.connection = new CountingEventTarget();

      unsubscribe();

      expect(original?.counts()).toEqual({});
    });
  });
});
