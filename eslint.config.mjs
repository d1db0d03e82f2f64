import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      '**/node_modules/**',
      'coverage/**',
      '.tmp/**',
      '.results/**',
      '.releases/**',
      '.api-docs/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Optional peers are loaded lazily by a literal require() at the call site (lib/core/optional-peer.ts):
    // bundlers see the name, and it resolves from where the package is installed. Only these names.
    files: ['lib/**/*.ts'],
    rules: {
      '@typescript-eslint/no-require-imports': [
        'error',
        {
          allow: [
            '^ioredis$',
            '^@valkey/valkey-glide$',
            '^@opentelemetry/api$',
            '^prom-client$',
            '^drizzle-orm$',
            '^graphql$',
            '^@nestjs/microservices$',
            '^@nestjs/websockets$',
          ],
        },
      ],
    },
  },
  {
    // CommonJS scripts and configs: require() is how they load modules.
    files: ['**/*.cjs', '*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
