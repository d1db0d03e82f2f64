// The toolchain matrix's Vitest cell for Nest 12: the testing module.
import { describe, expect, it } from 'vitest';
import { describeTestingModule } from '../testing-module-tests.mjs';

describeTestingModule({ describe, expect, it }, 'nestjs-distributed-lock/testing under Vitest, Nest 12');
