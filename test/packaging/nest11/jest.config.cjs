/** Jest in its default CommonJS mode on the packed package (what a Nest 11 app's tests run). */
module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/*.test.cjs'],
  transform: {},
  detectOpenHandles: true,
  testTimeout: 60000,
};
