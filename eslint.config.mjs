import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const PACKAGE_PATHS = [
  { group: ['@billstream/*/src/*', '@billstream/*/dist/*'], message: 'Import a package through its index, never a deep path.' },
  { group: ['../../libs/*', '../../services/*', '../../../libs/*', '../../../services/*'], message: 'Import other packages by their @billstream name.' },
];
const SERVICE_NAMES = readdirSync(new URL('./services', import.meta.url));
const SERVICES = SERVICE_NAMES.map((name) => `@billstream/${name}`);

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/.data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', __dirname: 'readonly', require: 'readonly', module: 'writable', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', fetch: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { patterns: PACKAGE_PATHS }],
    },
  },
  {
    // The console runs in a browser (ADR 0050).
    files: ['services/console/**'],
    languageOptions: { globals: { window: 'readonly', document: 'readonly', sessionStorage: 'readonly', location: 'readonly', navigator: 'readonly' } },
  },
  {
    // Libraries sit below the services (docs/adr/0011-import-rules.md); cycles are checked by
    // scripts/check-imports.js, the second half of `npm run lint`.
    files: ['libs/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...PACKAGE_PATHS,
            { group: SERVICES, message: 'A library never imports a service: move the shared code into a library.' },
            { group: ['**/test-e2e/**', '**/bench/**'], message: 'A library never imports the e2e tests or the benchmarks.' },
          ],
        },
      ],
    },
  },
  // No service imports another (docs/adr/0011-import-rules.md): they talk over HTTP and Kafka.
  // services/standalone runs them all in one process and is the one exception; test-e2e/ may
  // import any. .dependency-cruiser.cjs (no-service-imports-another) checks resolved paths too.
  ...SERVICE_NAMES.filter((name) => name !== 'standalone').map((name) => ({
    files: [`services/${name}/**`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...PACKAGE_PATHS,
            {
              group: SERVICES.filter((s) => s !== `@billstream/${name}`),
              message: 'A service never imports another service: call its API, consume its events, or move the shared code into a library.',
            },
          ],
        },
      ],
    },
  })),
  {
    // @billstream/client is published on its own: it imports no package of this repository.
    files: ['libs/client/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@billstream/*'], message: '@billstream/client is published alone: it imports no other package of the repository.' }] },
      ],
    },
  },
  {
    files: ['**/*.test.ts', 'libs/testing/**', 'test-e2e/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.test.js'],
    languageOptions: { globals: { describe: 'readonly', it: 'readonly', expect: 'readonly', beforeAll: 'readonly', afterAll: 'readonly' } },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
