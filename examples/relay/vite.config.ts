import { defineConfig } from 'vite';
import relay from 'vite-plugin-relay';

// The Relay example builds on its own, after relay-compiler has written src/__generated__:
// `npx relay-compiler` (in examples/relay), then `npx vite build --config examples/relay/vite.config.ts`.
// vite-plugin-relay turns each graphql`…` into an import of the artifact relay-compiler made of it.
export default defineConfig({
  root: import.meta.dirname,
  plugins: [relay],
  // React and Relay's runtime are most of its 600 kB; one chunk is what the example needs.
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 800 },
  logLevel: 'warn',
});
