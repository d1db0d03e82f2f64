// Setup of the Nest 12 run (the `nest12` project of jest.config.js). In ESM mode Jest does not put `jest` in scope;
// the specs call jest.setTimeout(), so give them the global they have in the CommonJS run. And make
// sure the redirection worked: Nest 12 and the packed library, not lib/.
import { jest, expect } from '@jest/globals';

globalThis.jest = jest;

expect(import.meta.resolve('@nestjs/core')).toMatch(
  /\/test\/packaging\/nest12\/node_modules\/@nestjs\/core\//,
);
expect(import.meta.resolve('../../../lib')).toMatch(
  /\/test\/packaging\/nest12\/node_modules\/nestjs-distributed-lock\/dist\/esm\/index\.js$/,
);
