import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/.data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', __dirname: 'readonly', require: 'readonly', module: 'writable', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', fetch: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@billstream/*/src/*', '@billstream/*/dist/*'], message: 'Import a package through its index, never a deep path.' },
            { group: ['../../libs/*', '../../services/*', '../../../libs/*', '../../../services/*'], message: 'Import other packages by their @billstream name.' },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.test.ts', 'libs/testing/**', 'test-e2e/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
