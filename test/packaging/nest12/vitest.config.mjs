import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: { include: ['vitest/**/*.test.mjs'], testTimeout: 60_000, hookTimeout: 60_000 },
});
