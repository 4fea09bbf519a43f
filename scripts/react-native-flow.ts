/**
 * An esbuild plugin that makes React Native's own modules (its Flow-typed `Libraries/` and `src/`) bundleable
 * outside an app: every file under react-native/Libraries or react-native/src has its Flow types stripped by
 * `flow-remove-types` (Meta's own tool, which blanks the types where they stand, so the code that runs is React
 * Native's, byte for byte). Two TurboModules that do not exist outside the app resolve to `null`, as in an app
 * without them: NativeBlobModule (only `URL.createObjectURL` reads it) and NativeReactNativeFeatureFlags (the DOM
 * events behind React Native's `AbortSignal` read only JavaScript flags, which keep their defaults). Bundles
 * also take `REACT_NATIVE_DEFINE`, what Metro gives a release build's modules. Used by the React Native test environment
 * (test/helpers/react-native-env) and `npm run bench:hermes`'s React Native host.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Plugin } from 'esbuild';

const require = createRequire(import.meta.url);

const reactNativeDir = dirname(require.resolve('react-native/package.json'));

/** Where react-native's Libraries folder is. */
export const reactNativeLibrariesDir = join(reactNativeDir, 'Libraries');

/** Where react-native's own web APIs are (`AbortController` and `AbortSignal` since React Native 0.87). */
export const reactNativeWebApisDir = join(reactNativeDir, 'src', 'private', 'webapis');

/**
 * What a release build of an app gives React Native's modules: `__DEV__` false, and `global`, which Metro hands
 * every module as the global object.
 */
export const REACT_NATIVE_DEFINE = { __DEV__: 'false', global: 'globalThis' };

/**
 * esbuild's helper for a `require()` of an ES module, which copies the module's exports into a new object at every
 * call.
 */
const TO_COMMON_JS =
  'var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);';

/**
 * `bundle` (esbuild's output) with each module's CommonJS view made once and kept, as Metro hands every `require`
 * of a module the exports it made once: React Native's `AbortController` requires `./AbortSignal` inside its
 * constructor and `abort()`, so esbuild's copy at every call would be a cost no app pays. Throws if the bundle
 * has esbuild's helper in another form, rather than measure it.
 */
export function metroRequires(bundle: string): string {
  if (!bundle.includes('__toCommonJS(')) return bundle;
  if (!bundle.includes(TO_COMMON_JS))
    throw new Error('metroRequires: esbuild no longer writes __toCommonJS as this expects');
  return bundle.replace(
    TO_COMMON_JS,
    'var __commonJsViews = new WeakMap(); var __toCommonJS = (mod) => { var view = __commonJsViews.get(mod); if (view === undefined) { view = __copyProps(__defProp({}, "__esModule", { value: true }), mod); __commonJsViews.set(mod, view); } return view; };',
  );
}

export const reactNativeFlow: Plugin = {
  name: 'react-native-flow',
  setup(builder) {
    builder.onResolve({ filter: /(NativeBlobModule|NativeReactNativeFeatureFlags)$/ }, (args) => ({
      path: args.path,
      namespace: 'absent',
    }));
    // `react-native/src/private/...`, which the package does not export (its own modules import them by relative
    // path): by file.
    builder.onResolve({ filter: /^react-native\/src\/private\// }, (args) => ({
      path: join(reactNativeDir, `${args.path.slice('react-native/'.length)}.js`),
    }));
    builder.onLoad({ filter: /.*/, namespace: 'absent' }, () => ({
      contents: 'export default null;',
      loader: 'js',
    }));
    builder.onLoad({ filter: /[\\/]react-native[\\/](Libraries|src)[\\/].*\.js$/ }, async (args) => {
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
