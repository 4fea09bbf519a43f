/**
 * bench/hermes/host.ts with what React Native 0.87 and later install in place of the host's small stand-ins: its
 * own `AbortController` and `AbortSignal` (react-native/src/private/webapis/dom/abort-api, Libraries/Core/setUpXHR.js)
 * over its own `EventTarget` and `Event` (src/private/webapis/dom/events, installed by src/private/setup/setUpDOM.js),
 * and `URL` and `URLSearchParams` (Libraries/Blob/URL.js), bundled with scripts/react-native-flow.ts's plugin: what
 * every peer that aborts or parses a URL pays in an app. Bundled on its own and run before bench/hermes/script.ts.
 */
import { URL, URLSearchParams } from 'react-native/Libraries/Blob/URL';
import { AbortController } from 'react-native/src/private/webapis/dom/abort-api/AbortController';
import { AbortSignal_public as AbortSignal } from 'react-native/src/private/webapis/dom/abort-api/AbortSignal';
import Event from 'react-native/src/private/webapis/dom/events/Event';
import EventTarget from 'react-native/src/private/webapis/dom/events/EventTarget';

import { installHostGlobals } from './host.js';

const host = globalThis as Record<string, unknown>;
host.Event = Event;
host.EventTarget = EventTarget;
host.AbortController = AbortController;
host.AbortSignal = AbortSignal;
host.URL = URL;
host.URLSearchParams = URLSearchParams;
installHostGlobals();
