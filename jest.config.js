/** Jest: real Redis only; test/support/global-setup checks redis-server exists. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/faults/', '<rootDir>/test/nest12/'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }] },
  setupFilesAfterEnv: ['<rootDir>/test/support/fail-on-unhandled.ts'],
  detectOpenHandles: true,
  testTimeout: 60000,
  maxWorkers: 2,
};
