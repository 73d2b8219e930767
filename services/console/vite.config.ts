import { defineConfig } from 'vite';

// The console is served by the gateway at /console (ADR 0050): static files, no inline script
// (the Content-Security-Policy allows scripts from 'self' only), React's automatic JSX runtime.
export default defineConfig({
  base: '/console/',
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
  },
});
