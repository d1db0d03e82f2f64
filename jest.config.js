/**
 * Jest: real Redis only (every spec starts its own redis-server processes on free ports, so specs run
 * in parallel workers). Open-handle detection forces Jest in band, so it is a step of its own
 * (`npm run test:handles`, jest.handles.config.js), not part of this parallel run.
 */
const IN_BAND = require('./jest.in-band.js');

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  testPathIgnorePatterns: [
    '/node_modules/',
    '<rootDir>/test/faults/',
    '<rootDir>/test/nest12/',
    // Run by `npm run test:packed` on the packed tarball (jest.packed.config.js).
    '<rootDir>/test/packed-build/',
    ...IN_BAND,
  ],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }] },
  setupFilesAfterEnv: ['<rootDir>/test/support/fail-on-unhandled.ts'],
  testTimeout: 60000,
  // Most specs wait on Redis, child processes and timers rather than on the CPU: more workers than
  // the 2 cores keeps both busy.
  maxWorkers: 4,
};
