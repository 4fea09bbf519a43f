import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Loopback servers and child processes: keep files apart so ports and timers never interfere.
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
