import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const lib = (name: string) => fileURLToPath(new URL(`../../libs/${name}/src/index.ts`, import.meta.url));

// The console is served by the gateway at /console (ADR 0050): static files, no inline script
// (the Content-Security-Policy allows scripts from 'self' only), React's automatic JSX runtime.
// The browser-safe libraries are bundled from their TypeScript sources (their dist is CommonJS
// for Node): the forms validate with the zod schemas of libs/contracts ("The forms"), and the
// price preview runs the calculator billing bills with (libs/pricing), with what they import.
export default defineConfig({
  base: '/console/',
  esbuild: { jsx: 'automatic' },
  resolve: {
    alias: {
      '@billstream/contracts': lib('contracts'),
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
    rollupOptions: {
      // zod's comments mention `@__PURE__` in prose, which Rollup reports and ignores: not a problem of ours.
      onwarn(warning, warn) {
        if (warning.code === 'INVALID_ANNOTATION' && warning.id?.includes('/node_modules/zod/')) return;
        warn(warning);
      },
    },
  },
});
