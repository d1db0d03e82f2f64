import { FAIR_LOCK_SCENARIOS } from './fair-lock';
import { MUTEX_SCENARIOS } from './mutex';
import { READ_WRITE_SCENARIOS } from './read-write-lock';
import { SEMAPHORE_SCENARIOS } from './semaphore';
import type { Scenario } from './steps';
import { TOKEN_LOCK_SCENARIOS } from './token-lock';

export type { Call, KindName, Scenario, Step, Want } from './steps';
export { LONG_MS } from './steps';

/** Every conformance scenario, grouped by the kind it is about (add a group for a new kind). */
export const SCENARIOS: Record<string, Scenario[]> = {
  'reentrant mutex': MUTEX_SCENARIOS,
  'token lock': TOKEN_LOCK_SCENARIOS,
  'read-write lock': READ_WRITE_SCENARIOS,
  'fair lock': FAIR_LOCK_SCENARIOS,
  semaphore: SEMAPHORE_SCENARIOS,
};
