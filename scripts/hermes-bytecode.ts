/**
 * Hermes bytecode from failwise's sources, as a React Native release build makes it: esbuild bundles an entry
 * to one script, resolving packages as Metro does for React Native (the `react-native` field and condition
 * first), and `hermesc -emit-binary -O` (npm `hermes-compiler`, the compiler React Native 0.88 builds with)
 * compiles it. Used by the compile check (test/build/hermes-compile.test.ts) and `npm run bench:hermes`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { build, type Plugin } from 'esbuild';

/**
 * What esbuild may leave for hermesc: Hermes 1.0 parses ES2022 (classes with private members, `??`, `?.`,
 * async functions); syntax newer than that is lowered.
 */
export const HERMES_TARGET = 'es2022';

const BINARY_DIRECTORY: Partial<Record<NodeJS.Platform, string>> = {
  linux: 'linux64-bin/hermesc',
  darwin: 'osx-bin/hermesc',
  win32: 'win64-bin/hermesc.exe',
};

/** The `hermesc` that npm's `hermes-compiler` ships for this platform. */
export function hermescPath(): string {
  const binary = BINARY_DIRECTORY[process.platform];
  if (!binary) throw new Error(`hermesc: hermes-compiler has no binary for ${process.platform}`);
  const packageJson = createRequire(import.meta.url).resolve('hermes-compiler/package.json');
  return path.join(path.dirname(packageJson), 'hermesc', binary);
}

export interface HermesBundleOptions {
  /** A file to bundle; or `contents`, a module whose imports resolve from `resolveDir`. */
  entry?: string;
  contents?: string;
  resolveDir?: string;
  /** Identifiers replaced by these expressions (esbuild's `define`). */
  define?: Record<string, string>;
  /** esbuild plugins (React Native's Flow-typed `Libraries/` need scripts/react-native-flow.ts's). */
  plugins?: Plugin[];
}

/** One classic script (an IIFE) of `entry` and everything it imports, as Metro resolves it for React Native. */
export async function bundleForHermes(options: HermesBundleOptions): Promise<string> {
  const result = await build({
    ...(options.entry !== undefined && { entryPoints: [options.entry] }),
    ...(options.contents !== undefined && {
      stdin: { contents: options.contents, resolveDir: options.resolveDir ?? process.cwd(), loader: 'ts' },
    }),
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'neutral',
    mainFields: ['react-native', 'browser', 'module', 'main'],
    conditions: ['react-native', 'import', 'require'],
    target: HERMES_TARGET,
    define: options.define ?? {},
    plugins: options.plugins ?? [],
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

export interface HermescResult {
  /** hermesc's exit status: 0 when it compiled. */
  status: number | null;
  /** Its `error:` lines (warnings, such as a global it does not know, are left out). */
  errors: string[];
}

/** Compiles `source` with `hermesc -emit-binary -O` to `out` (or to a file deleted afterwards). */
export function compileWithHermesc(source: string, out?: string): HermescResult {
  const dir = mkdtempSync(path.join(tmpdir(), 'failwise-hermesc-'));
  try {
    const input = path.join(dir, 'bundle.js');
    writeFileSync(input, source);
    const run = spawnSync(
      hermescPath(),
      ['-emit-binary', '-O', '-w', '-out', out ?? path.join(dir, 'bundle.hbc'), input],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    if (run.error) throw run.error;
    const errors = `${run.stdout}\n${run.stderr}`.split('\n').filter((line) => line.includes('error:'));
    return { status: run.status, errors };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
