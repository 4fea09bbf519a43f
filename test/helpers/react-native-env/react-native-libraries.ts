/**
 * React Native's own `URL`, `URLSearchParams` (react-native/Libraries/Blob/URL.js), `FormData`
 * (Libraries/Network/FormData.js), and, as React Native 0.87 and later install them, `AbortController`,
 * `AbortSignal` (src/private/webapis/dom/abort-api), `Event` and `EventTarget` (src/private/webapis/dom/events),
 * made importable in Node.
 *
 * Why a build step: the files are Flow-typed ES module source, and some import native modules (TurboModules that
 * do not exist outside the app): esbuild bundles them with scripts/react-native-flow.ts's plugin, which strips the
 * types and makes those modules `null`, as a release build (`__DEV__` false). The result is plain ESM with no
 * imports, written where the caller asks.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';

import {
  REACT_NATIVE_DEFINE,
  reactNativeFlow,
  reactNativeLibrariesDir as librariesDir,
  reactNativeWebApisDir as webApisDir,
} from '../../../scripts/react-native-flow.js';

/** What the module written by `writeReactNativeLibraries` exports. */
export interface ReactNativeLibraries {
  URL: unknown;
  URLSearchParams: unknown;
  FormData: unknown;
  AbortController: unknown;
  AbortSignal: unknown;
  Event: unknown;
  EventTarget: unknown;
}

/** Writes React Native's modules (`ReactNativeLibraries`), as plain ESM, to `file`. */
export async function writeReactNativeLibraries(file: string): Promise<void> {
  const from = (path: string) => JSON.stringify(path);
  const result = await build({
    stdin: {
      contents: [
        `export { URL, URLSearchParams } from ${from(join(librariesDir, 'Blob', 'URL.js'))};`,
        `export { default as FormData } from ${from(join(librariesDir, 'Network', 'FormData.js'))};`,
        // As Libraries/Core/setUpXHR.js installs them.
        `export { AbortController } from ${from(join(webApisDir, 'dom', 'abort-api', 'AbortController.js'))};`,
        `export { AbortSignal_public as AbortSignal } from ${from(join(webApisDir, 'dom', 'abort-api', 'AbortSignal.js'))};`,
        // As src/private/setup/setUpDOM.js installs them.
        `export { default as Event } from ${from(join(webApisDir, 'dom', 'events', 'Event.js'))};`,
        `export { default as EventTarget } from ${from(join(webApisDir, 'dom', 'events', 'EventTarget.js'))};`,
      ].join('\n'),
      resolveDir: librariesDir,
      loader: 'js',
    },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    write: false,
    logLevel: 'silent',
    define: REACT_NATIVE_DEFINE,
    plugins: [reactNativeFlow],
  });
  await writeFile(file, result.outputFiles[0]!.text);
}
