// ESLint (flat config) with typescript-eslint. Aimed at defects, not style: ESLint's and
// typescript-eslint's recommended rules, plus the type-aware promise rules (a promise nobody
// awaits or catches is a lost error in a server). No formatting rules.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.tap/**', 'data/**', 'tmp/**', 'bench/results/**', 'deploy/**', 'test-results/**', 'dashboard/src/generated/**'],
  },
  {
    files: ['**/*.{ts,mjs,js}'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: globals.node,
    },
    linterOptions: {
      reportUnusedDisableDirectives: 'error',
    },
    rules: {
      // A `let` assigned later but read first by a teardown closure (the test files' pattern) must
      // stay a `let`: as a `const` declared at the assignment, an early teardown would hit the TDZ.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // `_name` marks a parameter or binding kept on purpose (a callback's signature, a
      // destructured field left out of a rest object).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: {
        // One program for src, workers, schemas, bench and test (see tsconfig.lint.json).
        project: './tsconfig.lint.json',
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // tap's t.test() returns a promise that tap itself tracks; a test file need not await it.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', name: 'test', package: '@tapjs/test' }] },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // With noUncheckedIndexedAccess a `!` or cast states what the type does not know; one the
      // type already says is noise that hides the ones that matter.
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
    },
  },
  {
    // The dashboard: browser code, its own program (dashboard/tsconfig.json).
    files: ['dashboard/**/*.{ts,tsx}'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    languageOptions: {
      globals: globals.browser,
      parserOptions: { project: './dashboard/tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    // The browser SDK: browser code, its own program (sdk/web/tsconfig.json).
    files: ['sdk/**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    languageOptions: {
      globals: globals.browser,
      parserOptions: { project: './sdk/web/tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
);
