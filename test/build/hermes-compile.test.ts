// Every entry a React Native app can import compiles for Hermes with the hermesc React Native 0.88 builds with
// (npm `hermes-compiler`, `-emit-binary -O` as a release build): Metro resolves failwise's exports by their
// `default` condition (there is no `react-native` one), so each such entry of package.json is bundled from its
// source to one script (scripts/hermes-bytecode.ts, resolving dependencies as Metro does) and compiled. Built
// here from src/, so it needs nothing built beforehand; it needs no Hermes VM.
import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { bundleForHermes, compileWithHermesc } from '../../scripts/hermes-bytecode.js';

interface ExportTarget {
  default?: string;
  node?: unknown;
}

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  exports: Record<string, ExportTarget | string>;
  reactNative: { minimum: string };
};
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** failwise/node is for Node (node:http, node:sqlite stores): a React Native app has no use for it. */
const NOT_FOR_REACT_NATIVE = new Set(['./node', './package.json']);

/** Each entry React Native can import, and its source: `./dist/src/x.js` is built from `src/x.ts`. */
const entries = Object.entries(packageJson.exports)
  .filter(([subpath]) => !NOT_FOR_REACT_NATIVE.has(subpath))
  .map(([subpath, target]) => {
    const built = typeof target === 'string' ? target : target.default;
    const source = built?.replace(/^\.\/dist\/(.*)\.js$/, '$1.ts');
    if (!source || source === built) throw new Error(`package.json: no default build for "${subpath}"`);
    return [subpath, source] as const;
  });

describe('the minimum React Native', () => {
  it('is the one README states', () => {
    const minimum = packageJson.reactNative.minimum.replace(/^>=/, '');
    expect(readme).toContain(`**React Native ${minimum} or later, on Hermes**`);
  });
});

describe('hermesc', () => {
  it('knows every entry it compiles', () => {
    expect(entries.map(([subpath]) => subpath)).toEqual(
      expect.arrayContaining(['.', './machines', './react-native', './tanstack-query', './otel']),
    );
  });

  it.each(entries)('compiles the %s entry (%s) with no error', async (_subpath, source) => {
    const bundle = await bundleForHermes({ entry: source });
    const { status, errors } = compileWithHermesc(bundle);
    expect(errors).toEqual([]);
    expect(status).toBe(0);
  });
});
