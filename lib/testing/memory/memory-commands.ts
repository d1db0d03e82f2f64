import { quoteKey } from '../../core/options/validation';
import { LockRedisError } from '../../core/errors';
import type { ReleaseResult, RenewResult } from '../../core/kinds/lock-kind';
import { toLockRedisError } from '../../core/redis/redis-gateway';
import type { MemoryStore } from './memory-store';

/** Sees every script's raw reply, named after its Lua file (the conformance spec compares them). */
export type MemoryReplyObserver = (script: string, reply: unknown) => void;

/**
 * Runs the in-memory kinds' operations the way the Redis kinds run their Lua scripts: each one
 * atomic (synchronous on the store), its reply delivered on a later event-loop turn like a network
 * reply, and every call rejected with a LockRedisError while the backend is made to fail.
 */
export class MemoryCommands {
  /** Told of every reply, in order (tests only). */
  observer?: MemoryReplyObserver;

  constructor(
    readonly store: MemoryStore,
    private readonly fenceTtlMs: number,
  ) {}

  /**
   * Runs `operation` (the port of the Lua script `name`) atomically; rejects before running it when
   * the backend is failing.
   */
  async run<T>(operation: () => T, name: string, userKey?: string): Promise<T> {
    const failure = this.store.failure;
    if (failure) {
      await replyTurn();
      throw failingError(failure, name, userKey);
    }
    let result: T;
    try {
      result = operation();
    } catch (err) {
      // A command that failed inside a script (WRONGTYPE): the script stops there, as in Redis,
      // and the caller gets the same LockRedisError the gateway makes of a script error.
      this.observer?.(name, err);
      await replyTurn();
      throw toLockRedisError(err, name, userKey);
    }
    this.observer?.(name, result);
    await replyTurn();
    return result;
  }

  /**
   * fence.lua: greater than every earlier token of the key, floored by the server clock in µs;
   * `reserve` > 1 keeps the next reserve - 1 tokens for the same grant (cohort hand-offs).
   */
  nextFence(fenceKey: string, reserve = 1): number {
    const last = Number(this.store.getString(fenceKey) ?? '0') || 0;
    const token = Math.max(last + 1, this.store.nowUs());
    this.store.setString(fenceKey, String(token + reserve - 1), this.fenceTtlMs);
    return token;
  }

  /** The server clock in whole ms, as the scripts read it from TIME. */
  nowMs(): number {
    return Math.floor(this.store.nowMs());
  }
}

/** The codes of the renew scripts (1 renewed, 0 gone, -1 taken over), decoded as renew-batch.ts does. */
export function decodeRenewCode(code: 1 | 0 | -1): RenewResult {
  return code === 1 ? 'renewed' : code === 0 ? 'gone' : 'taken-over';
}

/** The codes of the per-hold release scripts (1 released, 2 still held, 0 not held), decoded as reply.ts does. */
export function decodeReleaseCode(code: 0 | 1 | 2): ReleaseResult {
  return code === 1 ? 'released' : code === 2 ? 'still-held' : 'not-held';
}

/** The error a failing backend answers with: always a LockRedisError naming the key, cause kept. */
function failingError(failure: Error, name: string, userKey?: string): LockRedisError {
  const key = userKey === undefined ? '' : ` for lock ${quoteKey(userKey)}`;
  return new LockRedisError(
    `The in-memory lock backend failed ${name}${key} (failBackend): ${failure.message}`,
    userKey,
    failure,
  );
}

function replyTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
