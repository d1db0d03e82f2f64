// The toolchain matrix's Jest cell for Nest 12: Jest in ESM mode, the testing module.
import { describe, expect, it } from '@jest/globals';
import { describeTestingModule } from '../testing-module-tests.mjs';

describeTestingModule(
  { describe, expect, it },
  'nestjs-distributed-lock/testing under Jest (ESM mode), Nest 12',
);
