// ESLint with typescript-eslint's type-aware rules; Prettier owns the layout (eslint-config-prettier
// turns off the rules it would fight), except the line length, which is checked here for the
// strings and comments Prettier does not wrap.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'var/', 'bench/results/', 'test/artifacts/', '.scratch/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
  prettier,
  {
    rules: {
      'max-len': ['error', { code: 120, ignoreUrls: true }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // Tests read JSON response bodies, which are untyped by nature, and assert their shape field by
    // field; declaring a type for each would only restate the assertions. Promise handling and the
    // other type-aware rules still apply.
    files: ['test/**/*.ts'],
    rules: {
      // A test's title is the sentence a failure prints; it stays on one line.
      'max-len': ['error', { code: 120, ignoreUrls: true, ignorePattern: '^\\s*test(\\.\\w+)?\\(' }],
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // The example apps (examples/) are plain JavaScript a newcomer copies without a build: no
    // type information, Node's and the browser's globals.
    files: ['examples/**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: Object.fromEntries(
        ['process', 'console', 'Buffer', 'URL', 'URLSearchParams', 'fetch']
          .concat(['document', 'location', 'history', 'sessionStorage'])
          .map((g) => [g, 'readonly']),
      ),
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: 'readonly', console: 'readonly' },
    },
  },
);
