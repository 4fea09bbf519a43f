/**
 * React Native's own `URL`, `URLSearchParams` (react-native/Libraries/Blob/URL.js) and `FormData`
 * (Libraries/Network/FormData.js), made importable in Node.
 *
 * Why a build step: the files are Flow-typed ES module source, and URL.js imports a native module
 * (NativeBlobModule, a TurboModule that does not exist outside the app): esbuild bundles them with
 * scripts/react-native-flow.ts's plugin, which strips the types and makes NativeBlobModule `null`. The result is
 * plain ESM with no imports, written where the caller asks.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';

import {
  reactNativeFlow,
  reactNativeLibrariesDir as librariesDir,
} from '../../../scripts/react-native-flow.js';

/** Writes React Native's modules, as plain ESM exporting `URL`, `URLSearchParams` and `FormData`, to `file`. */
export async function writeReactNativeLibraries(file: string): Promise<void> {
  const result = await build({
    stdin: {
      contents: [
        `export { URL, URLSearchParams } from ${JSON.stringify(join(librariesDir, 'Blob', 'URL.js'))};`,
        `export { default as FormData } from ${JSON.stringify(join(librariesDir, 'Network', 'FormData.js'))};`,
      ].join('\n'),
      resolveDir: librariesDir,
      loader: 'js',
    },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    write: false,
    logLevel: 'silent',
    plugins: [reactNativeFlow],
  });
  await writeFile(file, result.outputFiles[0]!.text);
}
