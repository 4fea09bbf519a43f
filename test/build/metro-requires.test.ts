// bench:hermes bundles React Native's modules with esbuild, whose `require()` of an ES module copies the module's
// exports at every call; `metroRequires` makes that copy once per module, as Metro hands every `require` the same
// exports. Checked on a real esbuild bundle, run here.
import { createContext, runInContext } from 'node:vm';

import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

import { metroRequires } from '../../scripts/react-native-flow.js';

/** A bundle whose entry requires an ES module at each call of `view()`, as React Native's AbortController does. */
async function bundle(): Promise<string> {
  const result = await build({
    stdin: {
      contents: `globalThis.view = () => require('./signal.js');`,
      resolveDir: '/virtual',
      loader: 'js',
    },
    bundle: true,
    format: 'iife',
    write: false,
    logLevel: 'silent',
    plugins: [
      {
        name: 'virtual',
        setup(builder) {
          builder.onResolve({ filter: /signal\.js$/ }, () => ({ path: 'signal.js', namespace: 'virtual' }));
          builder.onLoad({ filter: /.*/, namespace: 'virtual' }, () => ({
            contents: 'export const createSignal = () => ({ aborted: false });',
            loader: 'js',
          }));
        },
      },
    ],
  });
  return result.outputFiles[0]!.text;
}

/** What two calls of the bundle's `view()` return, the bundle run in a context of its own. */
function twoViews(code: string): [unknown, unknown] {
  const scope = createContext({}) as { view?: () => unknown };
  runInContext(code, scope);
  return [scope.view!(), scope.view!()];
}

describe('metroRequires', () => {
  it("gives every require of a module the same exports, where esbuild's helper copies them each time", async () => {
    const code = await bundle();
    const [first, second] = twoViews(code);
    expect(first).not.toBe(second);
    const [kept, again] = twoViews(metroRequires(code));
    expect(kept).toBe(again);
    expect(typeof (kept as { createSignal: unknown }).createSignal).toBe('function');
  });

  it('leaves a bundle with no such require as it is', () => {
    expect(metroRequires('var x = 1;')).toBe('var x = 1;');
  });

  it('refuses a helper in a form it does not know, rather than measure it', () => {
    expect(() => metroRequires('var __toCommonJS = (m) => m; __toCommonJS(a);')).toThrow(
      /no longer writes __toCommonJS/,
    );
  });
});
