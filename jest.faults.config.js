/** The fault-injection suite: kills, pauses and restarts real redis-server processes (each spec its own). */
const base = require('./jest.config.js');
module.exports = {
  ...base,
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/nest12/'],
  testMatch: ['<rootDir>/test/faults/**/*.spec.ts'],
  maxWorkers: 2,
  testTimeout: 120000,
};
