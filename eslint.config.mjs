// `npm run lint` (part of `npm run check`): typescript-eslint's recommended rules over the
// Worker's source, its tests and scripts.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      '.wrangler/',
      '**/.wrangler/',
      'ui-build/',
      '.ui-build-*/',
      'migrations/',
      'test/ui/artifacts/',
      'src/worker-configuration.d.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2024, sourceType: 'module' },
    rules: {
      // TypeScript resolves every name in the sources; the scripts run on Node and are tried by `npm run check`.
      'no-undef': 'off',
      // `_name` marks a parameter kept on purpose; `const { secret, ...rest }` drops a key.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // Tests read answers as loose JSON.
    files: ['test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Declarations of globals (`declare var`) are how a .d.ts adds them.
    files: ['**/*.d.ts'],
    rules: { 'no-var': 'off' },
  },
);
