import { quoteKey } from '../../core/options/validation';
import { LockRedisError } from '../../core/errors';
import type { AttemptResult } from '../../core/kinds/lock-kind';
import type { MemoryStore } from './memory-store';

/**
 * Runs the in-memory kinds' operations the way the Redis kinds run their Lua scripts: each one
 * atomic (synchronous on the store), its reply delivered on a later event-loop turn like a network
 * reply, and every call rejected with a LockRedisError while the backend is made to fail.
 */
export class MemoryCommands {
  constructor(
    readonly store: MemoryStore,
    private readonly fenceTtlMs: number,
  ) {}

  /** Runs `operation` atomically; rejects before running it when the backend is failing. */
  async run<T>(operation: () => T, name: string, userKey?: string): Promise<T> {
    const failure = this.store.failure;
    if (failure) {
      await replyTurn();
      throw failingError(failure, name, userKey);
    }
    const result = operation();
    await replyTurn();
    return result;
  }

  /** fence.lua: greater than every earlier token of the key, floored by the server clock in µs. */
  nextFence(fenceKey: string): number {
    const last = Number(this.store.getString(fenceKey) ?? '0') || 0;
    const token = Math.max(last + 1, this.store.nowUs());
    this.store.setString(fenceKey, String(token), this.fenceTtlMs);
    return token;
  }

  /** The server clock in whole ms, as the scripts read it from TIME. */
  nowMs(): number {
    return Math.floor(this.store.nowMs());
  }
}

/** The replies of the acquire scripts, decoded (see kinds/reply.ts). */
export const granted = (fencingToken: number, reentered = false): AttemptResult => ({
  status: 'granted',
  fencingToken,
  reentered,
});
export const busy = (retryAfterMs: number): AttemptResult => ({ status: 'busy', retryAfterMs });
export const notHeld: AttemptResult = { status: 'not-held' };

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
