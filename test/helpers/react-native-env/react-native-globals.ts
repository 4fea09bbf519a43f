/**
 * Makes this Node process's globals what a React Native app has, for code imported after it: run only in a child
 * process of its own (test/helpers/react-native-env/run-scenarios.ts), never in a test worker, so that no other
 * test file sees a global removed or replaced.
 *
 * - Removed, as Hermes and React Native have none of them: `DOMException`, the web streams (`ReadableStream`,
 *   `TransformStream`, ...), `structuredClone`, `crypto` (so no `crypto.randomUUID`), and Node's own fetch.
 * - React Native's own `URL`, `URLSearchParams` and `FormData` (react-native-libraries.ts).
 * - `AbortController` and `AbortSignal` as the app's React Native installs them (Libraries/Core/setUpXHR.js):
 *   - `current` (0.87 and later): its own, over its own `EventTarget` and `Event`, which it installs too
 *     (src/private/setup/setUpDOM.js): a signal with a `reason` (its own DOMException, which it does not make
 *     global), `AbortSignal.timeout` and `any`;
 *   - `before-0.87` (0.70 to 0.86): the `abort-controller` package's, over event-target-shim: a signal with no
 *     `reason`, and no `AbortSignal.timeout` or `any`.
 * - `fetch`, `Headers`, `Request`, `Response` from `whatwg-fetch`, as React Native's Libraries/Network/fetch.js
 *   installs them, over an XMLHttpRequest that answers as React Native's does (react-native-xhr.ts), with
 *   `Blob` (Node's) and a `FileReader` (file-reader.ts), so whatwg-fetch reads responses as blobs.
 */
import { createRequire } from 'node:module';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BlobFileReader } from './file-reader.js';
import { writeReactNativeLibraries, type ReactNativeLibraries } from './react-native-libraries.js';
import { ReactNativeXMLHttpRequest } from './react-native-xhr.js';

const require = createRequire(import.meta.url);

/** Globals React Native does not have. */
const ABSENT = [
  'DOMException',
  'ReadableStream',
  'ReadableStreamDefaultReader',
  'ReadableStreamBYOBReader',
  'WritableStream',
  'TransformStream',
  'ByteLengthQueuingStrategy',
  'CountQueuingStrategy',
  'TextDecoderStream',
  'TextEncoderStream',
  'CompressionStream',
  'DecompressionStream',
  'structuredClone',
  'crypto',
  'fetch',
  'Headers',
  'Request',
  'Response',
  'FormData',
  'File',
] as const;

/** Which React Native's `AbortController` the app has: its own since 0.87, the `abort-controller` package before. */
export type ReactNativeGeneration = 'current' | 'before-0.87';

export async function installReactNativeGlobals(generation: ReactNativeGeneration): Promise<void> {
  const file = join(tmpdir(), `failwise-react-native-${process.pid}.mjs`);
  await writeReactNativeLibraries(file);
  let libraries: ReactNativeLibraries;
  try {
    libraries = (await import(pathToFileURL(file).href)) as ReactNativeLibraries;
  } finally {
    await rm(file, { force: true });
  }
  const abort =
    generation === 'current'
      ? {
          AbortController: libraries.AbortController,
          AbortSignal: libraries.AbortSignal,
          Event: libraries.Event,
          EventTarget: libraries.EventTarget,
        }
      : (require('abort-controller/dist/abort-controller') as {
          AbortController: unknown;
          AbortSignal: unknown;
        });
  const global = globalThis as Record<string, unknown>;
  for (const name of ABSENT) Reflect.deleteProperty(globalThis, name);
  Object.assign(global, {
    URL: libraries.URL,
    URLSearchParams: libraries.URLSearchParams,
    FormData: libraries.FormData,
    AbortController: abort.AbortController,
    AbortSignal: abort.AbortSignal,
    ...('Event' in abort && { Event: abort.Event, EventTarget: abort.EventTarget }),
    XMLHttpRequest: ReactNativeXMLHttpRequest,
    FileReader: BlobFileReader,
  });
  // whatwg-fetch reads what the runtime supports (Blob, FileReader, FormData) when it is first imported.
  const whatwg = require('whatwg-fetch') as Record<string, unknown>;
  Object.assign(global, {
    fetch: whatwg.fetch,
    Headers: whatwg.Headers,
    Request: whatwg.Request,
    Response: whatwg.Response,
  });
}
