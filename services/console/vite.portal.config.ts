import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The customer portal (ADR 0069): a bundle of its own, in the console's stack, served by the
// gateway at /portal from dist/portal (built after the console, which empties dist). No inline
// script (the policy allows scripts from 'self' only), React's automatic JSX runtime, and none of
// the console's contracts or pricing: the portal only reads.
export default defineConfig({
  root: fileURLToPath(new URL('./portal', import.meta.url)),
  base: '/portal/',
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: fileURLToPath(new URL('./dist/portal', import.meta.url)),
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
  },
});
