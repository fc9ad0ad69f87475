// Lint rules: typescript-eslint's type-checked set plus the two checks the style guide asks for and
// its sizes of files and functions; the web app also gets React's rules of hooks.
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'data/**',
      'node_modules/**',
      'bench/results/**',
      'scripts/**',
      'examples/**',
      'web/dist/**',
      'web/src/api/generated/**',
      'web/scripts/compress.mjs',
      'web/src/voice/pcm-capture-worklet.js',
      'test-results/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['web/src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
    },
  },
  {
    // Sizes that read in one sitting: a file of at most 400 lines and a function of at most 80,
    // every line counted (comments and blank lines too, as `wc -l` counts them). Tests are left
    // out (a describe block is one long function by nature), and so are migrations' functions (a
    // migration is one table's history, written once and never changed).
    files: ['src/**/*.ts', 'web/src/**/*.{ts,tsx}'],
    ignores: ['src/**/*.test.ts', 'web/src/**/*.test.{ts,tsx}'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': [
        'error',
        { max: 80, skipBlankLines: false, skipComments: false, IIFEs: true },
      ],
    },
  },
  {
    files: ['src/storage/migrations/**/*.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
  {
    // Vitest's asymmetric matchers (expect.any, expect.stringContaining) are typed `any`.
    files: ['test/**/*.ts', 'src/**/*.test.ts'],
    rules: { '@typescript-eslint/no-unsafe-assignment': 'off' },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
