/*
 * What the shared behaviour suite needs from a backend: engines on one shared lock store (a
 * redis-server, or one in-memory store), closed after each test. Both specs pass one of these.
 */
import type { LockEngine } from '../../../lib/core/engine/lock-engine';
import type { LockEngineOptions } from '../../../lib/core/options/lock-options';

/** Engines for one backend; every engine built in a test shares that test's lock store. */
export interface BehaviourEnv {
  /** A new engine (a "replica") on the shared store; closed by closeEngines(). */
  engine(options?: LockEngineOptions): LockEngine;
  /** Closes every engine built since the last call (afterEach). */
  closeEngines(): Promise<void>;
  /** Stops what the env started (afterAll). */
  stop(): Promise<void>;
}

/** Starts the env for a spec file (beforeAll). */
export type BehaviourEnvFactory = () => Promise<BehaviourEnv>;

/** Runs `fn` once the env is up: the suites read `env()` inside their tests only. */
export function useBehaviourEnv(start: BehaviourEnvFactory): () => BehaviourEnv {
  let env: BehaviourEnv | undefined;
  beforeAll(async () => {
    env = await start();
  });
  afterEach(async () => {
    await env?.closeEngines();
  });
  afterAll(async () => {
    await env?.stop();
  });
  return () => {
    if (!env) throw new Error('The behaviour env did not start');
    return env;
  };
}

let seq = 0;
/** A key no other test uses. */
export function freshKey(label: string): string {
  seq += 1;
  return `bh:${label}:${seq}:${Math.random().toString(36).slice(2, 8)}`;
}
