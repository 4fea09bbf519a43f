import { ArgumentError } from '../errors/argument-error.js';
import type { ConnectivityHint, ConnectivitySource, ConnectivityState } from './connectivity-source.js';
import { hintSubscribers } from './hint-subscribers.js';
import { describeValue } from '../policy/describe-value.js';

/** The part of `@react-native-community/netinfo`'s state this source reads. */
export interface NetInfoStateLike {
  /** `wifi`, `cellular`, `ethernet`, `none`, `unknown`, ... */
  readonly type: string;
  /** `false`: no active network; `true`: one is up (not proof that the internet, or an API, answers); `null`: not known yet. */
  readonly isConnected: boolean | null;
  /** NetInfo's own probe of a URL of its choosing: `false` failed, `null` (or absent) not checked yet. */
  readonly isInternetReachable?: boolean | null | undefined;
}

export interface NetInfoConnectivityOptions {
  /**
   * Whether `isInternetReachable === false` (NetInfo's probe failed) counts as offline. Set `false` when your
   * users' networks block NetInfo's reachability URL (some corporate networks do): then only
   * `isConnected === false` is offline. `null` (not checked yet) is never offline.
   * @default true
   */
  reachability?: boolean | undefined;
}

/** The part of the NetInfo module this source uses: pass the module itself (`import NetInfo from '@react-native-community/netinfo'`). */
export interface NetInfoLike {
  addEventListener(listener: (state: NetInfoStateLike) => void): () => void;
}

/**
 * A connectivity source for React Native over the NetInfo module the app passes in (failwise does not depend on
 * it): `isConnected === false`, or `isInternetReachable === false` (unless `reachability: false`), is `offline`;
 * `isConnected === true` is `online`; `null` (not known yet) is `unknown`. A new network type while connected
 * (wifi to cellular) is the hint `changed`, so pooled connections of the old network are dropped and a read in
 * flight is sent again (docs/connectivity.md). Like every hint, `online` proves nothing about your API.
 *
 * NetInfo is listened to from the first subscriber to the last (the client subscribes when it is made, and
 * unsubscribes when closed); `current()` is the last state NetInfo reported while listened to, `unknown` before
 * its first report or while nobody listens. Listeners are called in order; one that throws does not stop the
 * others.
 */
export function netInfoConnectivity(
  netInfo: NetInfoLike,
  options: NetInfoConnectivityOptions = {},
): ConnectivitySource {
  if (typeof netInfo?.addEventListener !== 'function')
    throw new ArgumentError(
      'netInfoConnectivity',
      'netInfo',
      "expected the NetInfo module (import NetInfo from '@react-native-community/netinfo')",
    );
  if (typeof options !== 'object' || options === null)
    throw new ArgumentError(
      'netInfoConnectivity',
      'options',
      `expected an object, got ${describeValue(options)}`,
    );
  if (options.reachability !== undefined && typeof options.reachability !== 'boolean')
    throw new ArgumentError('netInfoConnectivity', 'options.reachability', 'expected a boolean');
  const reachability = options.reachability ?? true;
  let state: ConnectivityState = 'unknown';
  let type: string | undefined;
  let detach: (() => void) | undefined;
  const subscribers = hintSubscribers(
    () => (detach = netInfo.addEventListener(onState)),
    () => {
      detach?.();
      detach = undefined;
      state = 'unknown';
      type = undefined;
    },
  );
  const deliver = (hint: ConnectivityHint): void => subscribers.deliver(hint);
  const onState = (next: NetInfoStateLike): void => {
    const connected = next?.isConnected;
    const unreachable = reachability && next?.isInternetReachable === false;
    const now: ConnectivityState =
      connected === false || unreachable ? 'offline' : connected === true ? 'online' : 'unknown';
    const before = state;
    const newNetwork =
      now === 'online' && before === 'online' && typeof next.type === 'string' && next.type !== type;
    state = now;
    if (typeof next?.type === 'string') type = next.type;
    if (now !== before && now !== 'unknown') deliver(now);
    else if (newNetwork) deliver('changed');
  };

  return {
    current: () => state,
    subscribe: (listener) => subscribers.subscribe(listener),
  };
}
