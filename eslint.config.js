// ESLint, run by `npm test` (npm run lint): the recommended rules, and the type-aware ones that catch what tests
// rarely do (a promise nobody awaits, an async function where a callback's result is ignored, awaiting a non-promise).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'test-output/', '.data/', 'src/widget/client/dist/', '**/*.min.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // Rows from PostgreSQL and parsed outside documents are `any` at the one place they are mapped to our types.
      '@typescript-eslint/no-explicit-any': 'off',
      // The text rule and the header checks match control characters on purpose.
      'no-control-regex': 'off',
    },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
);
