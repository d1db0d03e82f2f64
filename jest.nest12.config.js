/**
 * The last step of `npm run test:packed` (scripts/test-packed.cjs installs the tarball into test/nest12): the
 * Nest-layer and e2e specs, unchanged, on NestJS 12 (ESM-only, so Jest runs in ESM mode) and on the
 * packed library. test/nest12-suite/resolver.cjs does the redirection.
 */
const base = require('./jest.config.js');
module.exports = {
  ...base,
  testMatch: ['<rootDir>/test/nest/**/*.spec.ts', '<rootDir>/test/e2e/**/*.spec.ts'],
  // demo.spec.ts and cron-replica-processes.spec.ts drive worker processes that ts-node starts from
  // the root node_modules (Nest 11); type-checks.spec.ts compiles fixtures with the repository's
  // tsconfig (Nest 11 types, CommonJS __dirname). They stay in the Nest 11 run only.
  testPathIgnorePatterns: [
    '/node_modules/',
    '<rootDir>/test/e2e/demo.spec.ts',
    '<rootDir>/test/nest/cron-replica-processes.spec.ts',
    '<rootDir>/test/nest/type-checks.spec.ts',
  ],
  extensionsToTreatAsEsm: ['.ts'],
  setupFilesAfterEnv: [...base.setupFilesAfterEnv, '<rootDir>/test/nest12-suite/setup.mjs'],
  resolver: '<rootDir>/test/nest12-suite/resolver.cjs',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/nest12-suite/tsconfig.json', useESM: true }],
  },
};
