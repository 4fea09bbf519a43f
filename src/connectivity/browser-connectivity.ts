import type { ConnectivityHint, ConnectivitySource, ConnectivityState } from './connectivity-source.js';
import { hintSubscribers } from './hint-subscribers.js';
import { ArgumentError } from '../errors/argument-error.js';
import { describeValue } from '../policy/describe-value.js';

/** The part of `EventTarget` this source uses: listeners that take no argument it reads. */
export interface ConnectivityEventTarget {
  addEventListener(type: string, listener: () => void): void;
  removeEventListener(type: string, listener: () => void): void;
}

/** The part of `navigator` this source reads. */
export interface ConnectivityNavigator {
  /** `false` means no network adapter is up; `true` only means one is (not that the internet answers). */
  readonly onLine?: boolean | undefined;
  /** The Network Information API (Chromium-based browsers; absent in Firefox and Safari). */
  readonly connection?: (Partial<ConnectivityEventTarget> & { readonly type?: unknown }) | undefined;
}

/**
 * Where a browser publishes its connectivity: `window`, or `self` in a worker. Tests pass a fake. A
 * target without `addEventListener` (Node, some embedded runtimes) gives a source that never hints.
 */
export interface BrowserConnectivityTarget extends Partial<ConnectivityEventTarget> {
  readonly navigator?: ConnectivityNavigator | undefined;
}

export interface BrowserConnectivityOptions {
  /**
   * Where to read `navigator.onLine` and listen for `online` / `offline`.
   * @default globalThis
   */
  target?: BrowserConnectivityTarget | undefined;
}

/**
 * A connectivity source for browsers and web workers, from `navigator.onLine` and the `online` / `offline`
 * events; where the Network Information API exists, `navigator.connection`'s `change` event is the hint
 * `changed` only when the connection reports a `type` and it changed (otherwise only an estimate moved, or the
 * browser cannot say).
 *
 * `current()` is `offline` only when `navigator.onLine === false`, `online` when it is `true`, and
 * `unknown` (treated as online) when there is no `navigator` or it has no boolean `onLine` (React Native).
 * `online` is weak evidence: a captive portal, a VPN or a LAN without an uplink all say it (see
 * docs/connectivity.md). Event listeners are added with the first subscriber and removed with the last,
 * so an unused source holds nothing. Listeners are called in order; one that throws does not stop the
 * others.
 */
export function browserConnectivity(options: BrowserConnectivityOptions = {}): ConnectivitySource {
  // Checked here, not when a listener is added: a wrong target would otherwise give a source that is quietly
  // always `unknown`.
  if (typeof options !== 'object' || options === null)
    throw new ArgumentError(
      'browserConnectivity',
      'options',
      `expected an object, got ${describeValue(options)}`,
    );
  if (options.target !== undefined && (typeof options.target !== 'object' || options.target === null))
    throw new ArgumentError(
      'browserConnectivity',
      'options.target',
      `expected an object such as window or self, got ${describeValue(options.target)}`,
    );
  const target: BrowserConnectivityTarget = options.target ?? globalThis;
  // The connection object listened to, kept so the listener comes off the object it went on.
  let connection: ConnectivityNavigator['connection'];
  // The connection's last `type` ('wifi', 'cellular'...), where the browser tells it (Chromium on Android and
  // ChromeOS): a `change` that keeps it is a new bandwidth estimate, not a new network.
  let connectionType: unknown;

  // Listened to from the first subscriber to the last (attach and detach below).
  const subscribers = hintSubscribers(
    () => attach(),
    () => detach(),
  );
  const deliver = (hint: ConnectivityHint): void => subscribers.deliver(hint);
  const onOnline = (): void => deliver('online');
  const onOffline = (): void => deliver('offline');
  const onChange = (): void => {
    const type = read(() => connection?.type);
    // Without a `type` (desktop Chromium) a new network cannot be told from a new estimate, and estimates move
    // often: passing those on would cost every read in flight an attempt each time. Such a browser hints no
    // `changed`; a read then waits out its attempt timeout across a real switch, as it would without a hint.
    const newNetwork = typeof type === 'string' && type !== connectionType;
    connectionType = type;
    // `changed` ends the reads in flight (docs/connectivity.md): an estimate that moved must not cost them.
    if (newNetwork) deliver('changed');
  };

  const attach = (): void => {
    target.addEventListener?.('online', onOnline);
    target.addEventListener?.('offline', onOffline);
    connection = read(() => target.navigator?.connection);
    connectionType = read(() => connection?.type);
    connection?.addEventListener?.('change', onChange);
  };
  const detach = (): void => {
    target.removeEventListener?.('online', onOnline);
    target.removeEventListener?.('offline', onOffline);
    connection?.removeEventListener?.('change', onChange);
    connection = undefined;
  };

  return {
    current(): ConnectivityState {
      const onLine = read(() => target.navigator?.onLine);
      if (onLine === false) return 'offline';
      if (onLine === true) return 'online';
      return 'unknown';
    },
    subscribe: (listener) => subscribers.subscribe(listener),
  };
}

/** What `get` returns, or `undefined` if it throws: a hostile getter must not break `current()`. */
function read<T>(get: () => T): T | undefined {
  try {
    return get();
  } catch {
    return undefined;
  }
}
