import { defineConfig } from 'vite';

const lib = (name: string) => decodeURIComponent(new URL(`../../libs/${name}/src/index.ts`, import.meta.url).pathname);

// The console is served by the gateway at /console (ADR 0050): static files, no inline script
// (the Content-Security-Policy allows scripts from 'self' only), React's automatic JSX runtime.
// The forms validate with the zod schemas of libs/contracts, bundled from its TypeScript source
// (its dist is CommonJS for Node), with the two libraries it imports (ADR 0050, "The forms").
export default defineConfig({
  base: '/console/',
  esbuild: { jsx: 'automatic' },
  resolve: {
    alias: {
      '@billstream/contracts': lib('contracts'),
      '@billstream/errors': lib('errors'),
      '@billstream/money': lib('money'),
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
