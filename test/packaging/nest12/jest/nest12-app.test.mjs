// A Nest 12 ESM app tested the way Nest 12 users test: Jest in ESM mode (node --experimental-vm-modules),
// importing the packed library (installed from its tarball by scripts/test-packed.cjs).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { describeAppTests } from '../app-tests.mjs';

describeAppTests(
  { afterAll, beforeAll, describe, expect, it },
  'jest',
  'nestjs-distributed-lock in a Nest 12 ESM app under Jest (ESM mode)',
);
