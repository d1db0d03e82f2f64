import { openDoor, type RedisConnectionOption } from '../redis/redis-connection';
import type { RedisDoor } from '../redis/redis-door';
import { nodeRuntime, type Runtime } from '../runtime/runtime';

/**
 * Everything an engine takes from the world outside it, in one object: its clocks, timers and
 * randomness (the runtime), and its door to Redis. createLockEngine() builds every engine from one;
 * production's is `nodeEnvironment`. The simulator (test/sim/) builds each simulated process from its
 * own: virtual time, a drifting clock, a seeded random source, and doors onto simulated servers over a
 * simulated network. Nothing else in lib/core reaches past it.
 */
export interface LockEnvironment {
  readonly runtime: Runtime;
  /**
   * Opens the door to one deployment: a URL, ioredis options or a client (`name` names the option
   * in errors: `redis`, `redlock[2]`). Connections it opens connect lazily.
   */
  openDoor(option: RedisConnectionOption, name: string): RedisDoor;
}

/** The production environment: Node's clocks, timers and CSPRNG; real clients. */
export const nodeEnvironment: LockEnvironment = { runtime: nodeRuntime, openDoor };
