import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'native/build/**', 'native/dist/**', 'test/lab/results/**', '**/*.mjs', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] }] }],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/explicit-function-return-type': ['error', { allowExpressions: true, allowTypedFunctionExpressions: true, allowHigherOrderFunctions: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read the environment only in config loading (src/config) and entry points (cli/).' }],
      'no-restricted-syntax': ['error', { selector: "CallExpression[callee.object.name='process'][callee.property.name='exit']", message: 'process.exit belongs to the entry points (cli/) only.' }],
    },
  },
  {
    files: ['cli/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', '**/*.test.ts'],
    rules: { 'no-restricted-properties': 'off', 'no-restricted-syntax': 'off' },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', '**/*.test.ts'],
    rules: { '@typescript-eslint/explicit-function-return-type': 'off' },
  },
  {
    files: ['webhook/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/native/**', 'netlink-native', '**/agent/**'], message: 'The webhook image has no compiler and no native addon.' }] }] },
  },
  {
    files: ['src/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/native/**', 'netlink-native', '**/agent/**', '**/webhook/**', 'node:fs', 'node:net', 'node:http', 'node:https', 'node:child_process'], message: 'src/ is the pure shared core: no I/O, no native, no webhook or agent.' }] }] },
  },
);
