/**
 * React Native's own `URL`, `URLSearchParams` (react-native/Libraries/Blob/URL.js) and `FormData`
 * (Libraries/Network/FormData.js), made importable in Node.
 *
 * Why a build step: the files are Flow-typed ES module source, and URL.js imports a native module
 * (NativeBlobModule, a TurboModule that does not exist outside the app). esbuild bundles it with two plugins: every file under
 * react-native/Libraries has its Flow types stripped by `flow-remove-types` (Meta's own tool, which blanks the
 * types where they stand, so the code that runs is React Native's, byte for byte), and NativeBlobModule
 * resolves to `null`, as in an app without the blob module (only `URL.createObjectURL` reads it). The result is
 * plain ESM with no imports, written where the caller asks.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { build, type Plugin } from 'esbuild';

const require = createRequire(import.meta.url);

/** Where react-native's Libraries folder is. */
const librariesDir = join(dirname(require.resolve('react-native/package.json')), 'Libraries');

const reactNativeFlow: Plugin = {
  name: 'react-native-flow',
  setup(builder) {
    builder.onResolve({ filter: /NativeBlobModule$/ }, () => ({
      path: 'NativeBlobModule',
      namespace: 'absent',
    }));
    builder.onLoad({ filter: /.*/, namespace: 'absent' }, () => ({
      contents: 'export default null;',
      loader: 'js',
    }));
    builder.onLoad({ filter: /[\\/]react-native[\\/]Libraries[\\/].*\.js$/ }, async (args) => {
      const flowRemoveTypes = require('flow-remove-types') as (
        source: string,
        options: { all: boolean },
      ) => { toString(): string };
      return {
        contents: flowRemoveTypes(await readFile(args.path, 'utf8'), { all: true }).toString(),
        loader: 'js',
      };
    });
  },
};

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
