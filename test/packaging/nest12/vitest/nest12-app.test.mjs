// A Nest 12 ESM app tested under Vitest, importing the packed library (installed from its tarball by
// scripts/test-packed.cjs).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeAppTests } from '../app-tests.mjs';

describeAppTests(
  { afterAll, beforeAll, describe, expect, it },
  'vitest',
  'nestjs-distributed-lock in a Nest 12 ESM app under Vitest',
);
