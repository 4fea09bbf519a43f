/**
 * Section 6: browser bundle sizes, measured by scripts/check-bundle-size.ts's `measureBundle` (esbuild) and by
 * scripts/rolldown-bundle.ts's `measureWithRolldown` (rolldown, what Vite builds with).
 */
import { measureBundle } from '../scripts/check-bundle-size.js';
import { measureWithRolldown } from '../scripts/rolldown-bundle.js';
import type { BenchResults, BundleFigures } from './report.js';

export const EVERYTHING_ENTRY = 'src/index.ts';
export const MINIMAL_ENTRY = 'bench/fixtures/minimal-app.ts';

async function figures(entry: string): Promise<BundleFigures> {
  const { totalGzipBytes, upFrontGzipBytes, ownGzipBytes } = await measureBundle({ entry });
  const rolldown = await measureWithRolldown(entry);
  return {
    entry,
    totalGzipBytes,
    upFrontGzipBytes,
    ownGzipBytes,
    rolldown: { upFrontGzipBytes: rolldown.upFrontGzipBytes, totalGzipBytes: rolldown.totalGzipBytes },
  };
}

export async function measureBundles(): Promise<BenchResults['bundle']> {
  return { everything: await figures(EVERYTHING_ENTRY), minimal: await figures(MINIMAL_ENTRY) };
}
