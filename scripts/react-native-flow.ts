/**
 * An esbuild plugin that makes React Native's own modules (its Flow-typed `Libraries/`) bundleable outside an app:
 * every file under react-native/Libraries has its Flow types stripped by `flow-remove-types` (Meta's own tool,
 * which blanks the types where they stand, so the code that runs is React Native's, byte for byte), and
 * NativeBlobModule (a TurboModule that does not exist outside the app) resolves to `null`, as in an app without the
 * blob module (only `URL.createObjectURL` reads it). Used by the React Native test environment
 * (test/helpers/react-native-env) and `npm run bench:hermes`'s React Native host.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Plugin } from 'esbuild';

const require = createRequire(import.meta.url);

/** Where react-native's Libraries folder is. */
export const reactNativeLibrariesDir = join(
  dirname(require.resolve('react-native/package.json')),
  'Libraries',
);

export const reactNativeFlow: Plugin = {
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
