// Apart from http.ts, which runs the built package (dist/): bench/compare.ts bundles each checkout's src/ itself
// and must run on a checkout with nothing built.
import { performance } from 'node:perf_hooks';

/** `concurrency` callers share `total` calls; returns the wall time. */
export async function callers(
  total: number,
  concurrency: number,
  call: (i: number) => Promise<void>,
): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await call(next++);
    }),
  );
  return performance.now() - start;
}
