import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { FAST_CHECK_VITEST, lazyFastCheckChains } from './test/setup/lazy-fast-check-chains.js';

const src = (file: string) => fileURLToPath(new URL(`./src/${file}`, import.meta.url));

export default defineConfig({
  // @fast-check/vitest builds its chained test APIs on demand (test/setup/lazy-fast-check-chains.ts): built at
  // import, they cost every test file 5 to 10 s of CPU, since the fixed-seed setup file imports it.
  plugins: [lazyFastCheckChains()],
  resolve: {
    // Lets tests import the package by its public names, as users do (e.g. the README example).
    alias: [
      // Tests run in Node, so `failwise` resolves as the package's `node` condition does.
      { find: /^failwise$/, replacement: src('index.node.ts') },
      {
        find: /^failwise\/(machines|node|browser|react-native|tanstack-query|otel)$/,
        replacement: src('$1.ts'),
      },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Fixed fast-check seeds: `npm test` is reproducible (test/setup/fixed-seed.ts).
    setupFiles: ['test/setup/fixed-seed.ts'],
    // Through vite, so that the plugin above sees it.
    server: { deps: { inline: [FAST_CHECK_VITEST] } },
    // Loopback servers and child processes: keep files apart so ports and timers never interfere.
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
