/**
 * A step of `npm run test:packed`: the specs that check the built package itself (today: it loads
 * and locks without its optional peers), on the tarball scripts/test-packed.cjs unpacked
 * (PACKED_PACKAGE_DIR). The parallel run (jest.config.js) leaves test/packed-build/ out.
 */
const base = require('./jest.config.js');
module.exports = {
  ...base,
  testMatch: ['<rootDir>/test/packed-build/**/*.spec.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
};
