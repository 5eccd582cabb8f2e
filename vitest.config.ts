import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // graphql ships CommonJS and ESM builds; the gateway's dependencies load
    // the CommonJS one, so the tests must too, or graphql sees two realms.
    alias: { graphql: 'graphql/index.js' },
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Each file has its own database and gateway, so files run in parallel.
    fileParallelism: true,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
