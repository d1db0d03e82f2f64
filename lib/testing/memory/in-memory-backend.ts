import { FairLock } from '../../core/kinds/fair-lock';
import { KindRegistry } from '../../core/kinds/kind-registry';
import { ReadWriteLock } from '../../core/kinds/read-write-lock';
import { ReentrantMutex } from '../../core/kinds/reentrant-mutex';
import { Semaphore } from '../../core/kinds/semaphore';
import { TokenLock } from '../../core/kinds/token-lock';
import { waiterTtlMs } from '../../core/kinds/waiter-ttl';
import type { LockBackend } from '../../core/engine/lock-backend';
import { RedisMultiLocker } from '../../core/multi/redis-multi-locker';
import type { ResolvedEngineOptions } from '../../core/options/lock-options';
import { WakeupHub } from '../../core/waiting/wakeup-hub';
import { MemoryScripts } from './memory-scripts';
import { MemoryStore } from './memory-store';
import { MemorySubscriber } from './memory-subscriber';
import { nodeRuntime, type Runtime } from '../../core/runtime/runtime';

/**
 * A LockBackend that keeps every lock in this process: the production lock kinds and multi-key
 * locker, built as RedisBackend builds them, run their scripts through MemoryScripts (TypeScript
 * ports of the Lua over a MemoryStore) instead of a Redis gateway; the real WakeupHub listens on an
 * in-process subscriber. For tests only: nothing is shared with other processes, and nothing
 * survives the process.
 */
export class InMemoryLockBackend implements LockBackend {
  readonly scripts: MemoryScripts;
  readonly kinds: KindRegistry;
  readonly multiKeys: RedisMultiLocker;
  readonly hub: WakeupHub;
  private subscriber?: MemorySubscriber;

  constructor(
    readonly options: ResolvedEngineOptions,
    /** The keyspace; pass another backend's store to act as a second replica on the same "Redis". */
    readonly store: MemoryStore = new MemoryStore(),
    /** The engine's runtime (its clock bounds each script call; its turns deliver the replies). */
    runtime: Runtime = nodeRuntime,
  ) {
    const scripts = (this.scripts = new MemoryScripts(store, options.commandTimeoutMs, runtime));
    const fence = options.fenceTtlMs;
    const waiterTtl = waiterTtlMs(options.backoff.maxMs);
    this.multiKeys = new RedisMultiLocker(scripts, fence);
    this.kinds = new KindRegistry(
      {
        mutex: new ReentrantMutex(scripts, fence),
        token: new TokenLock(scripts, fence),
        readWrite: new ReadWriteLock(scripts, fence, waiterTtl),
        fair: new FairLock(
          scripts,
          fence,
          waiterTtl,
          options.cohort !== false && options.cohort.fair === true,
        ),
        semaphore: new Semaphore(scripts, fence, waiterTtl),
      },
      'the in-memory lock backend',
    );
    this.hub = new WakeupHub(
      runtime,
      () => (this.subscriber = new MemorySubscriber(store)).asClient(),
      () => false,
      options.commandTimeoutMs,
    );
  }

  /** Answers at once, or rejects like every command while failBackend() is in force. */
  async ping(): Promise<number> {
    await this.scripts.ping();
    return 0;
  }

  async close(): Promise<void> {
    this.subscriber?.end();
    await this.hub.close();
  }
}
