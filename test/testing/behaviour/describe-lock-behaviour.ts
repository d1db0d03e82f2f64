/*
 * The core behaviour suite, written once and run against every backend (real Redis and the
 * in-memory backend of nestjs-distributed-lock/testing): the engine-level view. The script-level
 * view (same requests, same replies, same Redis state) is test/testing/conformance.spec.ts.
 */
import type { BehaviourEnvFactory } from './behaviour-env';
import { useBehaviourEnv } from './behaviour-env';
import { describeCohortBehaviour } from './cohort.behaviour';
import { describeFamilyBehaviour } from './family.behaviour';
import { describeMutexBehaviour } from './mutex.behaviour';

/** Declares the shared behaviour tests for one backend. */
export function describeLockBehaviour(name: string, start: BehaviourEnvFactory): void {
  describe(`lock behaviour on ${name}`, () => {
    const env = useBehaviourEnv(start);
    describeMutexBehaviour(env);
    describeCohortBehaviour(env);
    describeFamilyBehaviour(env);
  });
}
