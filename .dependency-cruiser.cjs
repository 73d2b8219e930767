/**
 * Import rules that ESLint cannot see file by file (docs/adr/0011-import-rules.md):
 * no module import cycles, type-only imports included, and no library importing a service.
 * `npm run lint` runs it after ESLint, through scripts/check-imports.js, which also refuses
 * cycles between packages (tests included).
 */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'Modules must not import each other in a circle, not even through `import type`.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'libs-not-services',
      severity: 'error',
      comment: 'Libraries are below services: a lib (its tests included) never imports a service.',
      from: { path: '^libs/' },
      to: { path: '^services/' },
    },
    {
      name: 'packages-not-tests-or-apps',
      severity: 'error',
      comment: 'A package (its tests included) never imports test-e2e/, bench/ or scripts/: those use the packages, not the reverse.',
      from: { path: '^(libs|services)/' },
      to: { path: '^(test-e2e|bench|scripts)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules|\\.data|coverage)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
