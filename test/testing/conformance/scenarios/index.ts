/*
 * Extending the conformance spec:
 * - a changed script: add or adjust scenarios in its kind's file here, mirror the change in its
 *   port (lib/testing/memory/scripts/<name>.ts), and run test/testing/conformance.spec.ts (every
 *   step's diff shows the script calls, raw replies, publishes and key state side by side);
 * - a new reply code: list it in ../script-replies.ts (the spec checks the table against the
 *   script's "-- Returns" header) and add a scenario that provokes it;
 * - a new script: an entry in ../script-replies.ts (codes, or `redisOnly` with the reason), its port
 *   in lib/testing/memory/scripts (listed in memory-scripts.ts), and for a new kind its class in
 *   the spec's kinds plus a group below.
 */
import { FAIR_LOCK_SCENARIOS } from './fair-lock';
import { MULTI_KEY_SCENARIOS } from './multi-key';
import { MUTEX_SCENARIOS } from './mutex';
import { READ_WRITE_SCENARIOS } from './read-write-lock';
import { SEMAPHORE_SCENARIOS } from './semaphore';
import type { Scenario } from './steps';
import { TOKEN_LOCK_SCENARIOS } from './token-lock';

export type { Call, KindName, Scenario, Step, Want } from './steps';
export { KEY, LONG_MS } from './steps';

/** Every conformance scenario, grouped by the kind it is about (add a group for a new kind). */
export const SCENARIOS: Record<string, Scenario[]> = {
  'reentrant mutex': MUTEX_SCENARIOS,
  'token lock': TOKEN_LOCK_SCENARIOS,
  'read-write lock': READ_WRITE_SCENARIOS,
  'fair lock': FAIR_LOCK_SCENARIOS,
  semaphore: SEMAPHORE_SCENARIOS,
  'multi-key lock': MULTI_KEY_SCENARIOS,
};
