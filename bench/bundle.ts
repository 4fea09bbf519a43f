/** Section 6: browser bundle sizes, measured by scripts/check-bundle-size.ts's `measureBundle`. */
import { measureBundle } from '../scripts/check-bundle-size.js';
import type { BenchResults, BundleFigures } from './report.js';

export const EVERYTHING_ENTRY = 'src/index.ts';
export const MINIMAL_ENTRY = 'bench/fixtures/minimal-app.ts';

async function figures(entry: string): Promise<BundleFigures> {
  const { totalGzipBytes, upFrontGzipBytes, ownGzipBytes } = await measureBundle({ entry });
  return { entry, totalGzipBytes, upFrontGzipBytes, ownGzipBytes };
}

export async function measureBundles(): Promise<BenchResults['bundle']> {
  return { everything: await figures(EVERYTHING_ENTRY), minimal: await figures(MINIMAL_ENTRY) };
}
