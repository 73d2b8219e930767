import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const lib = (name: string) => fileURLToPath(new URL(`../../libs/${name}/src/index.ts`, import.meta.url));

// The console is served by the gateway at /console (ADR 0050): static files, no inline script
// (the Content-Security-Policy allows scripts from 'self' only), React's automatic JSX runtime.
// The browser-safe libraries (the price calculator and what it needs) are bundled from their
// sources, so the console previews prices with the code billing bills with.
export default defineConfig({
  base: '/console/',
  esbuild: { jsx: 'automatic' },
  resolve: {
    alias: {
      '@billstream/pricing': lib('pricing'),
      '@billstream/money': lib('money'),
      '@billstream/errors': lib('errors'),
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
  },
});
