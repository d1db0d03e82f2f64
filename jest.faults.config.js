/**
 * The fault-injection suite (kills, pauses and restarts real redis-server processes) and the
 * timing-dependent cross-process specs (jest.in-band.js): in band, so timing and CPU shares are not
 * skewed by other specs.
 */
const base = require('./jest.config.js');
const IN_BAND = require('./jest.in-band.js');
module.exports = {
  ...base,
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/nest12/'],
  testMatch: ['<rootDir>/test/faults/**/*.spec.ts', ...IN_BAND],
  maxWorkers: 1,
  testTimeout: 120000,
};
