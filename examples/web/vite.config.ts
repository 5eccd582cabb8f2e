import { defineConfig } from 'vite';

// The example app builds on its own: `npx vite build --config examples/web/vite.config.ts`.
export default defineConfig({
  root: import.meta.dirname,
  build: { outDir: 'dist', emptyOutDir: true },
  logLevel: 'warn',
});
