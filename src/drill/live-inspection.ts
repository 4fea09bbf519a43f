/**
 * Live inspection for `npm run inspect`: a loopback relay that serves a page embedding the Stately
 * inspector, and a WebSocket inspector (`createWebSocketInspector` from `@statelyai/inspect`) that sends
 * every machine's inspection events to it. The relay keeps what it relayed and replays it to each viewer
 * that joins, so a browser opened late still sees every actor from its creation.
 *
 * Why not `createInspectorServer` from `@statelyai/inspect/server` (0.7.2, read and run): it listens on
 * every interface, replays only the last 200 messages, crashes the process on EADDRINUSE (an `error`
 * event nobody listens to), cannot say whether a viewer is connected, and its `stop()` leaves connected
 * viewers' sockets open, so the process cannot exit while a browser tab is open. This relay speaks the
 * same protocol (JSON text frames, one inspection event each), so the same page and any `ws` client work.
 */
import { createRequire } from 'node:module';
import { setTimeout as nextMacrotask } from 'node:timers/promises';
import type * as StatelyInspect from '@statelyai/inspect';
import type { InspectionEvent, Observer } from 'xstate';
import { startRelay, type WsServerClass } from './inspector-relay.js';
import type { InspectOption } from '../runtime/client-options.js';
import { withInspector } from '../runtime/with-inspector.js';

export { STATELY_INSPECTOR_URL } from './inspector-relay.js';

/** The port `npm run inspect` serves on unless `--port` says otherwise. */
export const DEFAULT_INSPECT_PORT = 4242;

/** The package live inspection needs (0.7.x: this code was written against 0.7.2's behaviour). */
export const INSPECT_PACKAGE = '@statelyai/inspect';
export const MISSING_INSPECT_PACKAGE_MESSAGE =
  'live inspection needs @statelyai/inspect, which is not installed: run `npm install --save-dev @statelyai/inspect@~0.7.2`';

export interface LiveInspectionOptions {
  /** The loopback port to serve the page and the relay on; 0 picks a free one. @default DEFAULT_INSPECT_PORT */
  port?: number;
  /** Loads `@statelyai/inspect`; for tests of the missing-package error. @default a dynamic import */
  loadInspectPackage?: () => Promise<InspectPackage>;
}

export interface LiveInspection {
  /** The `inspect` option to give a client: real XState actors, every one watched by the relay. */
  inspect: InspectOption;
  /** The inspection observer itself, for `createActor(machine, { inspect })`. */
  observer: Observer<InspectionEvent>;
  /** The page to open in a browser: it embeds the Stately inspector and feeds it from the relay. */
  url: string;
  /** The relay's WebSocket address for other viewers (a `ws` client): the same messages the page gets. */
  relayUrl: string;
  /** Viewers connected now (pages or WebSocket clients), not counting the inspector that feeds the relay. */
  viewers(): number;
  /** Inspection messages relayed so far. */
  relayed(): number;
  /** Resolves when a viewer is connected (at once if one is); rejects when `signal` aborts or on `stop()`. */
  waitForViewer(options?: { signal?: AbortSignal }): Promise<void>;
  /**
   * Sends what is still queued, closes the inspector, then every viewer (after it has received everything)
   * and the server. Afterwards no socket or timer is left. Safe to call twice.
   */
  stop(): Promise<void>;
}

type InspectPackage = Pick<typeof StatelyInspect, 'createWebSocketInspector'>;

/** Starts the relay on 127.0.0.1 and an inspector connected to it; see the file comment. */
export async function startLiveInspection(options: LiveInspectionOptions = {}): Promise<LiveInspection> {
  const { createWebSocketInspector } = await loadOptional(
    options.loadInspectPackage ?? (() => import('@statelyai/inspect')),
  );
  const { WebSocketServer } = await loadOptional(loadWs);
  const relay = await startRelay(WebSocketServer, options.port ?? DEFAULT_INSPECT_PORT);
  const inspector = createWebSocketInspector({ url: relay.sourceUrl });
  try {
    // Until its socket is open, the inspector's stop() starts a reconnect loop (every 5 s, forever).
    await relay.sourceReady;
  } catch (error) {
    inspector.stop();
    await relay.close();
    throw error;
  }

  let stopping: Promise<void> | undefined;
  return {
    inspect: withInspector(inspector.inspect),
    observer: inspector.inspect,
    url: relay.pageUrl,
    relayUrl: relay.viewerUrl,
    viewers: relay.viewers,
    relayed: relay.relayed,
    waitForViewer: relay.waitForViewer,
    stop: () =>
      (stopping ??= (async () => {
        // The inspector converts and sends each event in a setTimeout(0) of its own: let those run first.
        await nextMacrotask(0);
        inspector.stop();
        await relay.close();
      })()),
  };
}

/** Runs `load`, turning "@statelyai/inspect is not installed" into a message that says what to install. */
async function loadOptional<T>(load: () => T | Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isModuleNotFound(error)) throw new Error(MISSING_INSPECT_PACKAGE_MESSAGE, { cause: error });
    throw error;
  }
}

function isModuleNotFound(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

/** `ws` as @statelyai/inspect resolves it (its own dependency, wherever the package manager put it). */
function loadWs(): { WebSocketServer: WsServerClass } {
  const here = createRequire(import.meta.url);
  const fromInspect = createRequire(here.resolve(INSPECT_PACKAGE));
  return fromInspect('ws') as { WebSocketServer: WsServerClass };
}
