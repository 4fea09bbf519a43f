/**
 * Bundle-size budget of the `failwise` entry in a browser app.
 *
 *   npm run size [-- path/to/entry.ts]
 *
 * Bundles `src/index.ts` with esbuild as a browser app would (platform browser, ESM, minified,
 * tree-shaken) and measures gzip (level 9) sizes:
 * - total: failwise plus the parts of xstate and zod it pulls in.
 * - own (added): what failwise's own code adds to that bundle: total minus a bundle of exactly the
 *   xstate and zod exports failwise imports. Exact, and it is the measure the budget is checked
 *   against, so that own + dependencies = total, as the two budgets (24 KB own, 44 KB total) assume.
 * - own (alone): failwise's code bundled alone, the dependencies left external. Printed for
 *   reference: it is larger, because gzip then cannot share its dictionary with xstate's code.
 * Node built-ins are not marked external, so an import of `node:*` reachable from the entry fails the build.
 * Prints a table and exits 1 when a budget is exceeded.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

import { build, formatMessages, type BuildOptions, type Metafile } from 'esbuild';

/**
 * failwise's own code, gzipped. Issue 2 set 10 KB for the request lifecycle alone; with origin health, the
 * outbox and the cache in the root entry (as the CONTRACT has them) it measures 22.1 KB: docs/design.md.
 */
export const OWN_BUDGET_GZIP_BYTES = 24 * 1024;
/** failwise plus its dependencies, gzipped (issue 2: 30 KB; measured 41.4 KB: docs/design.md). */
export const TOTAL_BUDGET_GZIP_BYTES = 44 * 1024;

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEFAULT_ENTRY = path.join(ROOT, 'src/index.ts');
/** The name `byPackage` gives to code outside node_modules. */
const OWN_PACKAGE = 'failwise';

export interface BundleMeasurement {
  /** Gzip bytes failwise's own code adds to the bundle: total minus the dependencies it imports, alone. */
  ownGzipBytes: number;
  /** Gzip size of failwise's own code bundled alone, with its dependencies left external. */
  ownAloneGzipBytes: number;
  /** Gzip size of a bundle of just the dependency exports failwise imports. */
  dependenciesGzipBytes: number;
  /** Gzip size of the whole browser bundle, dependencies included. */
  totalGzipBytes: number;
  /**
   * Gzip bytes per package (`failwise` for the code outside node_modules), apportioned from the
   * total by each package's share of the minified output. Approximate: gzip does not split by input.
   */
  byPackage: Record<string, number>;
  /** Minified bytes per package in the whole bundle (exact). */
  minifiedByPackage: Record<string, number>;
  /** Imports left in the whole bundle. Nothing is external, so this is always empty. */
  bundleImports: string[];
}

export interface MeasureOptions {
  /** The entry to bundle; a path relative to the repository root, or absolute. @default 'src/index.ts' */
  entry?: string;
}

const gzipBytes = (contents: Uint8Array): number => gzipSync(contents, { level: 9 }).byteLength;

/** The package an esbuild input path belongs to, e.g. `node_modules/@scope/pkg/x.js` -> `@scope/pkg`. */
function packageOf(inputPath: string): string {
  const normalized = inputPath.replaceAll('\\', '/');
  const at = normalized.lastIndexOf('node_modules/');
  if (at === -1) return OWN_PACKAGE;
  const [first = '', second = ''] = normalized.slice(at + 'node_modules/'.length).split('/');
  return first.startsWith('@') ? `${first}/${second}` : first;
}

/** The runtime dependencies, from package.json: external in the "own" build. */
function runtimeDependencies(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };
  return [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})];
}

async function bundle(
  entry: string | { contents: string },
  external: string[],
): Promise<{ contents: Uint8Array; output: Metafile['outputs'][string] }> {
  const options: BuildOptions = {
    absWorkingDir: ROOT,
    ...(typeof entry === 'string'
      ? { entryPoints: [entry] }
      : { stdin: { contents: entry.contents, resolveDir: ROOT, loader: 'js' } }),
    outfile: 'bundle-size/failwise.js',
    bundle: true,
    write: false,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    minify: true,
    treeShaking: true,
    metafile: true,
    legalComments: 'none',
    logLevel: 'silent',
    // Each dependency and its subpaths (`zod` and `zod/mini`).
    external: external.flatMap((name) => [name, `${name}/*`]),
  };
  const result = await build(options);
  // Silent above so that errors arrive once, in the thrown error; warnings (e.g. an export that
  // does not exist) are still worth seeing.
  if (result.warnings.length > 0) {
    const formatted = await formatMessages(result.warnings, { kind: 'warning', color: false });
    console.warn(formatted.join('\n'));
  }
  const [file] = result.outputFiles ?? [];
  const output = Object.values(result.metafile?.outputs ?? {})[0];
  if (!file || !output) throw new Error(`esbuild produced no output for ${JSON.stringify(entry)}`);
  return { contents: file.contents, output };
}

/** Bundles the entry for the browser twice (whole, and with dependencies external) and measures both. */
export async function measureBundle(options: MeasureOptions = {}): Promise<BundleMeasurement> {
  const entry = path.resolve(ROOT, options.entry ?? DEFAULT_ENTRY);

  const whole = await bundle(entry, []);
  const own = await bundle(entry, runtimeDependencies());
  const dependencies = await bundle(
    { contents: dependencyEntry(new TextDecoder().decode(own.contents)) },
    [],
  );

  const totalGzipBytes = gzipBytes(whole.contents);
  const minifiedByPackage: Record<string, number> = {};
  for (const [input, { bytesInOutput }] of Object.entries(whole.output.inputs)) {
    const name = packageOf(input);
    minifiedByPackage[name] = (minifiedByPackage[name] ?? 0) + bytesInOutput;
  }
  // Apportions the gzip size by minified bytes: an estimate, good enough to see who is large.
  const allBytesInOutput = Object.values(minifiedByPackage).reduce((sum, bytes) => sum + bytes, 0);
  const byPackage = Object.fromEntries(
    Object.entries(minifiedByPackage)
      .sort(([, a], [, b]) => b - a)
      .map(([name, bytes]) => [
        name,
        allBytesInOutput === 0 ? 0 : Math.round((totalGzipBytes * bytes) / allBytesInOutput),
      ]),
  );

  const dependenciesGzipBytes = gzipBytes(dependencies.contents);
  return {
    ownGzipBytes: totalGzipBytes - dependenciesGzipBytes,
    ownAloneGzipBytes: gzipBytes(own.contents),
    dependenciesGzipBytes,
    totalGzipBytes,
    byPackage,
    minifiedByPackage,
    bundleImports: whole.output.imports.map((imported) => imported.path),
  };
}

/**
 * A module that re-exports exactly what the "own" bundle (dependencies external) imports from them:
 * `import{a as b}from"xstate"` gives `export { a } from 'xstate'`, and `import*as z from"zod/mini"` with
 * `z.strictObject(...)` gives `export { strictObject } from 'zod/mini'`. Bundled, it holds the same
 * dependency code as the whole bundle.
 */
export function dependencyEntry(ownBundle: string): string {
  const names = new Map<string, Set<string>>();
  const add = (from: string, name: string) => names.set(from, (names.get(from) ?? new Set()).add(name));
  for (const [, list = '', from = ''] of ownBundle.matchAll(/import\s*\{([^}]*)\}\s*from\s*"([^"]+)"/g)) {
    for (const item of list.split(',')) add(from, item.trim().split(/\s+as\s+/)[0] ?? '');
  }
  for (const [, alias = '', from = ''] of ownBundle.matchAll(
    /import\s*\*\s*as\s+([\w$]+)\s+from\s*"([^"]+)"/g,
  )) {
    const member = new RegExp(`(?<![\\w$.])${alias.replace('$', '\\$')}\\.([\\w$]+)`, 'g');
    for (const [, name = ''] of ownBundle.matchAll(member)) add(from, name);
  }
  return [...names].map(([from, set]) => `export { ${[...set].join(', ')} } from '${from}';`).join('\n');
}

const kb = (bytes: number): string => `${(bytes / 1024).toFixed(2)} KB`;

/** The report `npm run size` prints. */
export function formatReport(measurement: BundleMeasurement): string {
  const rows: [string, string, string][] = [['package', 'minified', 'gzip (apportioned)']];
  for (const [name, gzip] of Object.entries(measurement.byPackage)) {
    rows.push([name, kb(measurement.minifiedByPackage[name] ?? 0), kb(gzip)]);
  }
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column]?.length ?? 0)));
  const line = (row: string[]): string =>
    row
      .map((cell, column) =>
        column === 0 ? cell.padEnd(widths[0] ?? 0) : cell.padStart(widths[column] ?? 0),
      )
      .join('  ');
  const verdict = (bytes: number, budget: number): string =>
    `${kb(bytes).padStart(9)} of ${kb(budget)}  ${bytes <= budget ? 'ok' : 'OVER BUDGET'}`;
  return [
    line(rows[0] ?? []),
    ...rows.slice(1).map(line),
    '',
    `own, added to the bundle (gzip):  ${verdict(measurement.ownGzipBytes, OWN_BUDGET_GZIP_BYTES)}`,
    `total (gzip):                     ${verdict(measurement.totalGzipBytes, TOTAL_BUDGET_GZIP_BYTES)}`,
    `  own code bundled alone (gzip): ${kb(measurement.ownAloneGzipBytes).padStart(9)}  (for reference)`,
    `  its dependencies alone (gzip): ${kb(measurement.dependenciesGzipBytes).padStart(9)}`,
  ].join('\n');
}

async function main(): Promise<number> {
  const entry = process.argv[2];
  const measurement = await measureBundle(entry === undefined ? {} : { entry });
  console.log(formatReport(measurement));
  const over =
    measurement.ownGzipBytes > OWN_BUDGET_GZIP_BYTES || measurement.totalGzipBytes > TOTAL_BUDGET_GZIP_BYTES;
  return over ? 1 : 0;
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(path.resolve(invokedPath)).href) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exitCode = 1;
    },
  );
}
