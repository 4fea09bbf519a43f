/**
 * What the device says about its network (rule 6). A hint only: `online` never proves an origin
 * healthy (a captive portal, a VPN or a dead API all say `online`), it only wakes waiting work; `offline`
 * stops sending (an interactive request fails `offline` at once, durable work waits) and keeps failures
 * from counting against an origin's health. `changed` is a network switch (Wi-Fi to cellular): the
 * transport's pooled connections are dropped, a read in flight is sent again at once, a write in flight is
 * left to finish, and no attempt in flight across it counts against an origin (docs/connectivity.md).
 */
export type ConnectivityHint = 'online' | 'offline' | 'changed';

/**
 * Whether a source's listener was called with a hint failwise knows. A source of the app's own could pass
 * anything (`'maybe'`, NetInfo's state object): what failwise does not know it must not read as `offline`.
 */
export const isConnectivityHint = (hint: unknown): hint is ConnectivityHint =>
  hint === 'online' || hint === 'offline' || hint === 'changed';

/** `unknown` is treated as online: failwise never stops sending on a guess. */
export type ConnectivityState = 'online' | 'offline' | 'unknown';

export interface ConnectivitySource {
  /** The state now. Called often: must be cheap and never throw. */
  current(): ConnectivityState;
  /** Calls `listener` on every hint until the returned function is called. */
  subscribe(listener: (hint: ConnectivityHint) => void): () => void;
}
