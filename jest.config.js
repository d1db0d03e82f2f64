/**
 * Jest: real Redis only (every spec starts its own redis-server processes on free ports, so specs run
 * in parallel workers). Open-handle detection forces Jest in band, so it is a step of its own
 * (`npm run test:handles`, jest.handles.config.js), not part of this parallel run.
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  // mutual-exclusion.spec.ts measures per-process fairness of 4 CPU-bound worker processes: it runs
  // with the fault suite, in band, where no other spec competes for the 2 cores.
  testPathIgnorePatterns: [
    '/node_modules/',
    '<rootDir>/test/faults/',
    '<rootDir>/test/nest12/',
    '<rootDir>/test/core/mutual-exclusion.spec.ts',
  ],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }] },
  setupFilesAfterEnv: ['<rootDir>/test/support/fail-on-unhandled.ts'],
  testTimeout: 60000,
  // Most specs wait on Redis, child processes and timers rather than on the CPU: more workers than
  // the 2 cores keeps both busy.
  maxWorkers: 4,
};
