import { KindRegistry, LockKinds } from '../../core/kinds/kind-registry';
import { waiterTtlMs } from '../../core/kinds/waiter-ttl';
import type { LockBackend } from '../../core/engine/lock-backend';
import type { ResolvedEngineOptions } from '../../core/options/lock-options';
import { WakeupHub } from '../../core/waiting/wakeup-hub';
import { MemoryFairLock } from './kinds/memory-fair-lock';
import { MemoryMutex } from './kinds/memory-mutex';
import { MemoryReadWriteLock } from './kinds/memory-read-write-lock';
import { MemorySemaphore } from './kinds/memory-semaphore';
import { MemoryTokenLock } from './kinds/memory-token-lock';
import { MemoryCommands } from './memory-commands';
import { MemoryStore } from './memory-store';
import { MemorySubscriber } from './memory-subscriber';

/**
 * A LockBackend that keeps every lock in this process: the five lock kinds over a MemoryStore
 * with the semantics of their Lua scripts, and the real WakeupHub over an in-process subscriber.
 * For tests only: nothing is shared with other processes, and nothing survives the process.
 */
export class InMemoryLockBackend implements LockBackend {
  readonly commands: MemoryCommands;
  readonly kinds: KindRegistry;
  /** The five kinds by name (the conformance spec drives them beside the Redis kinds). */
  readonly lockKinds: Required<LockKinds>;
  readonly hub: WakeupHub;
  private subscriber?: MemorySubscriber;

  constructor(
    readonly options: ResolvedEngineOptions,
    /** The keyspace; pass another backend's store to act as a second replica on the same "Redis". */
    readonly store: MemoryStore = new MemoryStore(),
  ) {
    this.commands = new MemoryCommands(this.store, options.fenceTtlMs);
    const waiterTtl = waiterTtlMs(options.backoff.maxMs);
    this.lockKinds = {
      mutex: new MemoryMutex(this.commands),
      token: new MemoryTokenLock(this.commands),
      readWrite: new MemoryReadWriteLock(this.commands, waiterTtl),
      fair: new MemoryFairLock(
        this.commands,
        waiterTtl,
        options.cohort !== false && options.cohort.fair === true,
      ),
      semaphore: new MemorySemaphore(this.commands, waiterTtl),
    };
    this.kinds = new KindRegistry(this.lockKinds, 'the in-memory lock backend');
    this.hub = new WakeupHub(
      () => (this.subscriber = new MemorySubscriber(this.store)).asClient(),
      () => false,
      options.commandTimeoutMs,
    );
  }

  /** Answers at once, or rejects like every command while failBackend() is in force. */
  async ping(): Promise<number> {
    await this.commands.run(() => undefined, 'PING');
    return 0;
  }

  async close(): Promise<void> {
    this.subscriber?.end();
    await this.hub.close();
  }
}
