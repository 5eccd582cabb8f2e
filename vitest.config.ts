import { availableParallelism } from 'node:os';
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
    // Each file has its own database and gateway, so files run in parallel. Most of a file's time is spent
    // waiting on its servers (processes starting, idle gaps, time limits running out): one and a half files
    // per CPU. Vitest's default, one fewer than the CPUs, ran them one by one on two; a percentage here is
    // capped at the CPU count.
    fileParallelism: true,
    maxWorkers: Math.round(availableParallelism() * 1.5),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
