/**
 * Bundle-size budgets of failwise in a browser app.
 *
 *   npm run size                       both entries below, checked against their budgets
 *   npm run size -- path/to/entry.ts   one entry, measured only
 *   npm run size -- --inputs           also lists the largest input files of each bundle
 *
 * Bundles an entry with esbuild as a browser app would (platform browser, ESM, minified, tree-shaken, with code
 * splitting, so that each `import()` becomes a chunk of its own) and measures gzip (level 9) sizes, each chunk
 * compressed on its own as a server sends it:
 * - up front: the entry chunk and the chunks it imports statically, what an app loads before it runs.
 * - everything (total): all chunks, the lazily imported ones (durable work, cached reads) included.
 * - own (added): what failwise's own code adds to the total: total minus a bundle of exactly the zod (and any
 *   other dependency) exports failwise imports.
 * - own (alone): failwise's code bundled alone, the dependencies left external. Printed for reference: it is
 *   larger, because gzip then cannot share its dictionary with the dependencies' code.
 * The two entries and their budgets: the whole `failwise` entry (src/index.ts, every export kept) within 30 KB
 * for everything, and a minimal app (bench/fixtures/minimal-app.ts: only `createFailoverClient` and interactive
 * requests over two origins) within 16 KB up front. Node built-ins are not marked external, so an import of
 * `node:*` reachable from the entry fails the build. Prints the tables and exits 1 when a budget is exceeded.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

import { build, formatMessages, type BuildOptions, type Metafile } from 'esbuild';

/** Everything failwise's root entry has, all chunks, gzipped. */
export const EVERYTHING_BUDGET_GZIP_BYTES = 30 * 1024;
/** What the minimal app loads up front (its entry chunk and the chunks that one imports), gzipped. */
export const MINIMAL_UP_FRONT_BUDGET_GZIP_BYTES = 16 * 1024;

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The whole `failwise` entry, as browsers resolve it. */
export const EVERYTHING_ENTRY = 'src/index.ts';
/** An app that imports only `createFailoverClient` and makes interactive requests (also `npm run bench`'s). */
export const MINIMAL_ENTRY = 'bench/fixtures/minimal-app.ts';
/** The name `byPackage` gives to code outside node_modules. */
const OWN_PACKAGE = 'failwise';
const OUT_DIR = 'bundle-size';

/** One output file of a build. */
export interface ChunkMeasurement {
  /** Its name in the output directory. */
  file: string;
  /** `entry`: the entry chunk; `up-front`: imported by it statically; `lazy`: reached through `import()` only. */
  loaded: 'entry' | 'up-front' | 'lazy';
  minifiedBytes: number;
  gzipBytes: number;
  /** Minified bytes per input file (a path relative to the repository), largest first. */
  inputs: Record<string, number>;
}

export interface BundleMeasurement {
  /** The entry measured, relative to the repository root. */
  entry: string;
  /** Gzip size of what an app loads up front: the entry chunk and every chunk it imports statically. */
  upFrontGzipBytes: number;
  /** Gzip size of all chunks, the lazily loaded ones included: the whole browser bundle, dependencies included. */
  totalGzipBytes: number;
  /** Gzip bytes failwise's own code adds to the bundle: total minus the dependencies it imports, alone. */
  ownGzipBytes: number;
  /** Gzip size of failwise's own code bundled alone (all chunks), with its dependencies left external. */
  ownAloneGzipBytes: number;
  /** Gzip size of a bundle of just the dependency exports failwise imports. */
  dependenciesGzipBytes: number;
  /** Gzip size of the entry bundled into one file, without code splitting: what splitting costs in total. */
  oneFileGzipBytes: number;
  /** Every output file, the entry chunk first, then those loaded up front, then the lazy ones. */
  chunks: ChunkMeasurement[];
  /**
   * Gzip bytes per package (`failwise` for the code outside node_modules), all chunks: each chunk's gzip size
   * apportioned by each package's share of its minified output. Approximate: gzip does not split by input.
   */
  byPackage: Record<string, number>;
  /** `byPackage` for the chunks loaded up front only. */
  upFrontByPackage: Record<string, number>;
  /** Minified bytes per package in all chunks (exact). */
  minifiedByPackage: Record<string, number>;
  /** External imports left in any chunk. Nothing is external, so this is always empty. */
  bundleImports: string[];
}

export interface MeasureOptions {
  /** The entry to bundle; a path relative to the repository root, or absolute. @default 'src/index.ts' */
  entry?: string;
}

/** A chunk's size as a server sends it: gzip, level 9. */
export const gzipBytes = (contents: Uint8Array | string): number =>
  gzipSync(contents, { level: 9 }).byteLength;
/** A path with `/` between its parts, whatever the platform. */
export const posix = (file: string): string => file.replaceAll('\\', '/');

/** The package an esbuild input path belongs to, e.g. `node_modules/@scope/pkg/x.js` -> `@scope/pkg`. */
function packageOf(inputPath: string): string {
  const normalized = posix(inputPath);
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

interface Built {
  /** The chunks, in `ChunkMeasurement` order, with their contents. */
  chunks: Array<ChunkMeasurement & { contents: Uint8Array; imports: Metafile['outputs'][string]['imports'] }>;
}

async function bundle(
  entry: string | { contents: string },
  external: string[],
  splitting = typeof entry === 'string',
): Promise<Built> {
  const options: BuildOptions = {
    absWorkingDir: ROOT,
    ...(typeof entry === 'string'
      ? { entryPoints: [entry] }
      : { stdin: { contents: entry.contents, resolveDir: ROOT, loader: 'js' } }),
    outdir: OUT_DIR,
    // Each `import()` its own chunk, as an app's bundler makes it.
    splitting,
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
  const contents = new Map(
    (result.outputFiles ?? []).map((file) => [posix(path.relative(ROOT, file.path)), file.contents]),
  );
  const outputs = result.metafile?.outputs ?? {};
  const entryPoint = typeof entry === 'string' ? posix(path.relative(ROOT, entry)) : undefined;
  const entryOutput =
    Object.keys(outputs).find(
      (name) => entryPoint === undefined || outputs[name]?.entryPoint === entryPoint,
    ) ?? '';
  // What the entry chunk imports statically, and what those import, is loaded before the app runs.
  const upFront = new Set<string>();
  const visit = (name: string) => {
    if (upFront.has(name) || !outputs[name]) return;
    upFront.add(name);
    for (const imported of outputs[name].imports)
      if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
  };
  visit(entryOutput);
  const rank = (name: string) => (name === entryOutput ? 0 : upFront.has(name) ? 1 : 2);
  const chunks = Object.entries(outputs)
    .sort(([a], [b]) => rank(a) - rank(b))
    .map(([name, output]) => {
      const file = contents.get(name);
      if (!file) throw new Error(`esbuild wrote no contents for ${name}`);
      const inputs = Object.fromEntries(
        Object.entries(output.inputs)
          .map(([input, { bytesInOutput }]) => [posix(input), bytesInOutput] as const)
          .filter(([, bytes]) => bytes > 0)
          .sort(([, a], [, b]) => b - a),
      );
      const loaded: ChunkMeasurement['loaded'] =
        name === entryOutput ? 'entry' : upFront.has(name) ? 'up-front' : 'lazy';
      return {
        file: path.posix.basename(name),
        loaded,
        minifiedBytes: file.byteLength,
        gzipBytes: gzipBytes(file),
        inputs,
        contents: file,
        imports: output.imports,
      };
    });
  if (!entryOutput || chunks.length === 0)
    throw new Error(`esbuild produced no output for ${JSON.stringify(entry)}`);
  return { chunks };
}

const sum = (values: number[]): number => values.reduce((total, value) => total + value, 0);

/** Each chunk's gzip size apportioned to packages by their share of its minified output, summed over `chunks`. */
function apportion(chunks: ChunkMeasurement[]): Record<string, number> {
  const byPackage: Record<string, number> = {};
  for (const chunk of chunks) {
    const minified: Record<string, number> = {};
    for (const [input, bytes] of Object.entries(chunk.inputs)) {
      const name = packageOf(input);
      minified[name] = (minified[name] ?? 0) + bytes;
    }
    const all = sum(Object.values(minified));
    for (const [name, bytes] of Object.entries(minified))
      byPackage[name] = (byPackage[name] ?? 0) + (all === 0 ? 0 : (chunk.gzipBytes * bytes) / all);
  }
  return Object.fromEntries(
    Object.entries(byPackage)
      .sort(([, a], [, b]) => b - a)
      .map(([name, bytes]) => [name, Math.round(bytes)]),
  );
}

/** Bundles the entry for the browser twice (whole, and with dependencies external) and measures both. */
export async function measureBundle(options: MeasureOptions = {}): Promise<BundleMeasurement> {
  const entry = path.resolve(ROOT, options.entry ?? EVERYTHING_ENTRY);

  const whole = await bundle(entry, []);
  const own = await bundle(entry, runtimeDependencies());
  const ownChunks = own.chunks.map((chunk) => new TextDecoder().decode(chunk.contents));
  const dependencies = await bundle({ contents: dependencyEntry(ownChunks) }, []);
  const oneFile = await bundle(entry, [], false);

  const chunks: ChunkMeasurement[] = whole.chunks.map(
    ({ contents: _contents, imports: _imports, ...chunk }) => chunk,
  );
  const upFront = chunks.filter((chunk) => chunk.loaded !== 'lazy');
  const totalGzipBytes = sum(chunks.map((chunk) => chunk.gzipBytes));
  const minifiedByPackage: Record<string, number> = {};
  for (const chunk of chunks) {
    for (const [input, bytes] of Object.entries(chunk.inputs)) {
      const name = packageOf(input);
      minifiedByPackage[name] = (minifiedByPackage[name] ?? 0) + bytes;
    }
  }
  const dependenciesGzipBytes = sum(dependencies.chunks.map((chunk) => chunk.gzipBytes));
  return {
    entry: posix(path.relative(ROOT, entry)),
    upFrontGzipBytes: sum(upFront.map((chunk) => chunk.gzipBytes)),
    totalGzipBytes,
    ownGzipBytes: totalGzipBytes - dependenciesGzipBytes,
    ownAloneGzipBytes: sum(own.chunks.map((chunk) => chunk.gzipBytes)),
    dependenciesGzipBytes,
    oneFileGzipBytes: sum(oneFile.chunks.map((chunk) => chunk.gzipBytes)),
    chunks,
    byPackage: apportion(chunks),
    upFrontByPackage: apportion(upFront),
    minifiedByPackage: Object.fromEntries(Object.entries(minifiedByPackage).sort(([, a], [, b]) => b - a)),
    bundleImports: whole.chunks.flatMap((chunk) =>
      chunk.imports.filter((imported) => imported.external).map((imported) => imported.path),
    ),
  };
}

/**
 * A module that re-exports exactly what the "own" bundle (dependencies external) imports from them:
 * `import{a as b}from"xstate"` gives `export { a } from 'xstate'`, and `import*as z from"zod/mini"` with
 * `z.strictObject(...)` gives `export { strictObject } from 'zod/mini'`. A split bundle is given chunk by chunk
 * (a minified name means something else in each); imports of other chunks (`./chunk-….js`) are not dependencies.
 * Bundled, it holds the same dependency code as the whole bundle.
 */
export function dependencyEntry(ownBundle: string | string[]): string {
  const names = new Map<string, Set<string>>();
  const add = (from: string, name: string) => {
    if (from.startsWith('.') || from.startsWith('/')) return;
    names.set(from, (names.get(from) ?? new Set()).add(name));
  };
  for (const chunk of typeof ownBundle === 'string' ? [ownBundle] : ownBundle) {
    for (const [, list = '', from = ''] of chunk.matchAll(/import\s*\{([^}]*)\}\s*from\s*"([^"]+)"/g)) {
      for (const item of list.split(',')) add(from, item.trim().split(/\s+as\s+/)[0] ?? '');
    }
    for (const [, alias = '', from = ''] of chunk.matchAll(
      /import\s*\*\s*as\s+([\w$]+)\s+from\s*"([^"]+)"/g,
    )) {
      const member = new RegExp(`(?<![\\w$.])${alias.replace('$', '\\$')}\\.([\\w$]+)`, 'g');
      for (const [, name = ''] of chunk.matchAll(member)) add(from, name);
    }
  }
  return [...names].map(([from, set]) => `export { ${[...set].join(', ')} } from '${from}';`).join('\n');
}

const kb = (bytes: number): string => `${(bytes / 1024).toFixed(2)} KB`;

/** Rows as columns: the first `left` left-aligned, the others right-aligned. */
function table(rows: string[][], left = 1): string[] {
  const widths = (rows[0] ?? []).map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0)));
  return rows.map((row) =>
    row
      .map((cell, column) =>
        column < left ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0),
      )
      .join('  ')
      .trimEnd(),
  );
}

/** A budget to print and check a measurement against. */
export interface Budget {
  what: 'upFrontGzipBytes' | 'totalGzipBytes';
  bytes: number;
}

/** The budget each checked entry has. */
export const BUDGETS: Record<string, Budget> = {
  [EVERYTHING_ENTRY]: { what: 'totalGzipBytes', bytes: EVERYTHING_BUDGET_GZIP_BYTES },
  [MINIMAL_ENTRY]: { what: 'upFrontGzipBytes', bytes: MINIMAL_UP_FRONT_BUDGET_GZIP_BYTES },
};

/** Whether the measurement is within `budget` (or there is none). */
export const withinBudget = (measurement: BundleMeasurement, budget: Budget | undefined): boolean =>
  budget === undefined || measurement[budget.what] <= budget.bytes;

/** The report `npm run size` prints for one entry; `inputs`: also its largest input files, per chunk. */
export function formatReport(
  measurement: BundleMeasurement,
  options: { budget?: Budget | undefined; inputs?: number } = {},
): string {
  const { budget } = options;
  const chunkRows = [
    ['chunk', 'loaded', 'minified', 'gzip'],
    ...measurement.chunks.map((chunk) => [
      chunk.file,
      chunk.loaded === 'lazy' ? 'by import()' : 'up front',
      kb(chunk.minifiedBytes),
      kb(chunk.gzipBytes),
    ]),
  ];
  const packageRows = [
    ['package', 'minified', 'gzip up front', 'gzip, all chunks'],
    ...Object.entries(measurement.byPackage).map(([name, gzip]) => [
      name,
      kb(measurement.minifiedByPackage[name] ?? 0),
      kb(measurement.upFrontByPackage[name] ?? 0),
      kb(gzip),
    ]),
  ];
  const figure = (what: Budget['what'], bytes: number): string => {
    if (budget?.what !== what) return kb(bytes).padStart(9);
    return `${kb(bytes).padStart(9)} of ${kb(budget.bytes)}  ${bytes <= budget.bytes ? 'ok' : 'OVER BUDGET'}`;
  };
  const lines = [
    measurement.entry,
    ...table(chunkRows, 2).map((line) => `  ${line}`),
    '',
    ...table(packageRows).map((line) => `  ${line}`),
    '',
    `  up front (gzip):                  ${figure('upFrontGzipBytes', measurement.upFrontGzipBytes)}`,
    `  everything, all chunks (gzip):    ${figure('totalGzipBytes', measurement.totalGzipBytes)}`,
    `    own code, added to it (gzip):   ${kb(measurement.ownGzipBytes).padStart(9)}`,
    `    own code bundled alone (gzip):  ${kb(measurement.ownAloneGzipBytes).padStart(9)}  (for reference)`,
    `    its dependencies alone (gzip):  ${kb(measurement.dependenciesGzipBytes).padStart(9)}`,
    `    in one file, unsplit (gzip):    ${kb(measurement.oneFileGzipBytes).padStart(9)}  (for reference)`,
  ];
  const count = options.inputs ?? 0;
  if (count > 0) {
    for (const chunk of measurement.chunks) {
      const all = sum(Object.values(chunk.inputs));
      lines.push(
        '',
        `  largest inputs of ${chunk.file} (${chunk.loaded === 'lazy' ? 'by import()' : 'up front'}; gzip apportioned):`,
        ...table(
          Object.entries(chunk.inputs)
            .slice(0, count)
            .map(([input, bytes]) => [input, kb(bytes), kb(all === 0 ? 0 : (chunk.gzipBytes * bytes) / all)]),
        ).map((line) => `    ${line}`),
      );
    }
  }
  return lines.join('\n');
}

async function main(args: string[]): Promise<number> {
  const inputs = args.includes('--inputs') ? 15 : 0;
  const entries = args.filter((arg) => !arg.startsWith('--'));
  const checked = entries.length === 0;
  let over = false;
  for (const entry of checked ? [EVERYTHING_ENTRY, MINIMAL_ENTRY] : entries) {
    const measurement = await measureBundle({ entry });
    const budget = checked ? BUDGETS[entry] : undefined;
    console.log(`${formatReport(measurement, { budget, inputs })}\n`);
    if (!withinBudget(measurement, budget)) over = true;
  }
  return over ? 1 : 0;
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(path.resolve(invokedPath)).href) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exitCode = 1;
    },
  );
}
