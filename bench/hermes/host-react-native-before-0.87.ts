/**
 * bench/hermes/host.ts with what React Native 0.70 to 0.86 install in place of the host's small stand-ins: the
 * `abort-controller` package's `AbortController` and `AbortSignal` (over event-target-shim), and React Native's
 * `URL` and `URLSearchParams` (react-native/Libraries/Blob/URL.js, bundled with scripts/react-native-flow.ts's
 * plugin): what every peer that aborts or parses a URL pays in such an app. Bundled on its own and run before
 * bench/hermes/script.ts.
 */
// The module's default export, which carries `AbortSignal` too: esbuild reads a CommonJS module's named exports
// through getters made in a `for (let ...)` loop, which hermesc (without block scoping) compiles to one binding,
// so every named export would read the last one.
import abortController from 'abort-controller/dist/abort-controller';
import { URL, URLSearchParams } from 'react-native/Libraries/Blob/URL';

import { installHostGlobals } from './host.js';

const host = globalThis as Record<string, unknown>;
host.AbortController = abortController;
host.AbortSignal = abortController.AbortSignal;
host.URL = URL;
host.URLSearchParams = URLSearchParams;
installHostGlobals();
