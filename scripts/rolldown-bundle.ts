/**
 * The same bundle sizes as scripts/check-bundle-size.ts, built with rolldown, the bundler Vite builds apps with,
 * instead of esbuild: platform browser, ESM, minified, code splitting (each `import()` a chunk of its own), gzip
 * level 9, each chunk compressed on its own.
 *
 * Why a second bundler: esbuild places a module in a chunk by which entries reach it through static imports,
 * whether or not the import is used. `memoryStore` and `memoryCache` are exported by the `failwise` entry and used
 * by the lazily loaded durable-work and cached-reads chunks, so esbuild puts them (and `memoryStore`'s entry checks)
 * in a chunk that the minimal app loads up front, though it never calls them: about 1.6 KB gzip. rolldown places
 * them in those lazy chunks. Both figures are in `npm run bench` (docs/benchmarks.md, section 6); budgets are
 * checked on esbuild's, the larger.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

import { gzipBytes, posix } from './check-bundle-size.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface RolldownChunk {
  file: string;
  /** `up-front`: the entry chunk and what it imports statically; `lazy`: reached through `import()` only. */
  loaded: 'up-front' | 'lazy';
  gzipBytes: number;
  /** The modules in the chunk, as paths relative to the repository. */
  modules: string[];
}

export interface RolldownMeasurement {
  entry: string;
  upFrontGzipBytes: number;
  totalGzipBytes: number;
  chunks: RolldownChunk[];
}

/** Bundles `entry` (relative to the repository root, or absolute) for the browser with rolldown and measures it. */
export async function measureWithRolldown(entry: string): Promise<RolldownMeasurement> {
  const input = path.resolve(ROOT, entry);
  const build = await rolldown({ input, cwd: ROOT, platform: 'browser', logLevel: 'silent' });
  try {
    const { output } = await build.generate({ format: 'esm', minify: true });
    const chunks = output.flatMap((item) => (item.type === 'chunk' ? [item] : []));
    const entryChunk = chunks.find((chunk) => chunk.isEntry);
    if (entryChunk === undefined) throw new Error(`rolldown produced no entry chunk for ${entry}`);
    const upFront = new Set<string>();
    const visit = (fileName: string): void => {
      if (upFront.has(fileName)) return;
      upFront.add(fileName);
      for (const imported of chunks.find((chunk) => chunk.fileName === fileName)?.imports ?? [])
        visit(imported);
    };
    visit(entryChunk.fileName);
    const measured = chunks.map((chunk): RolldownChunk => ({
      file: chunk.fileName,
      loaded: upFront.has(chunk.fileName) ? 'up-front' : 'lazy',
      gzipBytes: gzipBytes(chunk.code),
      modules: Object.keys(chunk.modules).map((id) => posix(path.relative(ROOT, id))),
    }));
    const gzip = (list: RolldownChunk[]) => list.reduce((total, chunk) => total + chunk.gzipBytes, 0);
    return {
      entry: posix(path.relative(ROOT, input)),
      upFrontGzipBytes: gzip(measured.filter((chunk) => chunk.loaded === 'up-front')),
      totalGzipBytes: gzip(measured),
      chunks: measured,
    };
  } finally {
    await build.close();
  }
}
