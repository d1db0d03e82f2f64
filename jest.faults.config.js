/**
 * The fault-injection suite (kills, pauses and restarts real redis-server processes) and the
 * cross-process fairness run: in band, so timing and CPU shares are not skewed by other specs.
 */
const base = require('./jest.config.js');
module.exports = {
  ...base,
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/nest12/'],
  testMatch: ['<rootDir>/test/faults/**/*.spec.ts', '<rootDir>/test/core/mutual-exclusion.spec.ts'],
  maxWorkers: 1,
  testTimeout: 120000,
};
