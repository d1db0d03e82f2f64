/**
 * `npm run test:quick`, the inner loop: unit specs of the pure modules and the behaviour suite on the
 * in-memory backend — no redis-server, seconds not minutes.
 */
const base = require('./jest.config.js');
module.exports = {
  ...base,
  testMatch: ['<rootDir>/test/unit/**/*.spec.ts', '<rootDir>/test/testing/behaviour-memory.spec.ts'],
};
