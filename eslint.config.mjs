import tseslint from 'typescript-eslint';
import { modulesPlugin } from './eslint/module-boundaries.mjs';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'clients/typescript/dist/**',
      'test-artifacts/**',
      'node_modules/**',
      'coverage/**',
      '.data/**',
      'migrations/*-*.ts',
      'clients/typescript/src/schema.ts',
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      curly: ['error', 'multi-line'],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { modules: modulesPlugin },
    rules: { 'modules/no-relative-cross-module': 'error' },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', '**/*.spec.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
