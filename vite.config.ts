import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (file: string) => fileURLToPath(new URL(`./src/${file}`, import.meta.url));

export default defineConfig({
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
    // Loopback servers and child processes: keep files apart so ports and timers never interfere.
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
