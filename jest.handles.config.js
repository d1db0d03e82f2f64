/**
 * `npm run test:handles`: the specs that open and close engines, Nest apps and worker processes,
 * run once more with --detectOpenHandles (which forces Jest in band, so it is not part of the
 * parallel `npm test`). A timer, socket or subscription left after close() fails this step.
 */
const base = require('./jest.config.js');
module.exports = {
  ...base,
  testMatch: [
    '<rootDir>/test/core/close.spec.ts',
    '<rootDir>/test/core/abort-signal.spec.ts',
    '<rootDir>/test/nest/lifecycle.spec.ts',
    '<rootDir>/test/nest/lifecycle-drain.spec.ts',
    '<rootDir>/test/nest/redis-trouble.spec.ts',
    '<rootDir>/test/testing/testing-module.spec.ts',
    '<rootDir>/test/nest/provider-method.spec.ts',
  ],
  detectOpenHandles: true,
};
