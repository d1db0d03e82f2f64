import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', '**/node_modules/**', 'coverage/**', '.tmp/**', '.results/**', '.releases/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // CommonJS scripts and configs: require() is how they load modules.
    files: ['**/*.cjs', '*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
