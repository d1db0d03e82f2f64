/** Jest (CommonJS mode) with @swc/jest, the faster transform many Nest apps switch to. */
module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  moduleFileExtensions: ['js', 'json', 'ts'],
  transform: { '^.+\\.ts$': '@swc/jest' },
};
