import type { LockEngine } from '../core/engine/lock-engine';
import { KeySpace } from '../core/kinds/key-space';
import { KIND_TAG_LIST } from '../core/kinds/kind-registry';
import { type AttemptRequest, type LockKind } from '../core/kinds/lock-kind';
import { LockOptions, MAX_DURATION_MS } from '../core/options/lock-options';
import { quoteKey } from '../core/errors/message-text';
import { assertLockKey, assertDuration } from '../core/options/validation';
import type { InMemoryLockBackend } from './memory/in-memory-backend';
import type { MemoryStore } from './memory/memory-store';

/** Which lock kind a hold "elsewhere" takes (the kind the code under test asks for). */
export type ElsewhereKind = 'mutex' | 'token' | 'read' | 'write' | 'fair' | 'semaphore';

/** Options of holdElsewhere(). */
export interface HoldElsewhereOptions {
  /** The hold ends by itself after this many ms (like a lease). Default: until releaseElsewhere(). */
  forMs?: number;
  /** Default 'mutex' (also excludes the token lock, which shares its key). */
  kind?: ElsewhereKind;
  /** With kind 'semaphore': the limit the hold is taken under. Default 1. */
  limit?: number;
}

/** A lock held by the simulated other replica. */
export interface ElsewhereHold {
  readonly key: string;
  /** Its fencing token: the code under test gets larger ones afterwards. */
  readonly fencingToken: number;
  /** Releases this hold (waiters are woken). False when it had already ended. */
  release(): Promise<boolean>;
}

/** Options of loseLock(). */
export interface LoseLockOptions {
  /** Give the lock to another owner instead of deleting it (renewal then reports `taken-over`). */
  takeOver?: boolean;
}

const ELSEWHERE_OPTIONS: Record<Exclude<ElsewhereKind, 'semaphore'>, LockOptions> = {
  mutex: {},
  token: { reentrant: false },
  read: { mode: 'read' },
  write: { mode: 'write' },
  fair: { fair: true },
};
const registry = new WeakMap<LockEngine, LockTestingControls>();

/** Builds the controls of an in-memory engine and makes `LockTestingControls.of(engine)` find them. */
export function attachTestingControls(engine: LockEngine, backend: InMemoryLockBackend): LockTestingControls {
  const controls = new LockTestingControls(engine, backend);
  registry.set(engine, controls);
  return controls;
}

/**
 * Fault controls of an in-memory lock engine: another replica holding a key, a lock lost under its
 * holder, a backend that fails every call. Everything acts on the in-memory store the engine uses;
 * the engine itself is the real one and learns of each fault the way it would from Redis.
 */
export class LockTestingControls {
  private readonly keys: KeySpace;
  private readonly elsewhere = new Map<string, Set<ElsewhereHold>>();

  constructor(
    /** The engine these controls act on. */
    readonly engine: LockEngine,
    private readonly backend: InMemoryLockBackend,
  ) {
    this.keys = new KeySpace(engine.options.keyPrefix);
  }

  /** The controls of an engine built by createInMemoryLockEngine(). */
  static of(engine: LockEngine): LockTestingControls {
    const controls = registry.get(engine);
    if (!controls) throw new TypeError('This lock engine was not built by createInMemoryLockEngine()');
    return controls;
  }

  /**
   * Takes `key` as another replica would: a real grant with its own owner and fencing token, for
   * `forMs` or until releaseElsewhere(). Rejects when the key is busy, or while the backend fails.
   */
  async holdElsewhere(key: string, options: HoldElsewhereOptions = {}): Promise<ElsewhereHold> {
    assertLockKey(key);
    const kindName = options.kind ?? 'mutex';
    if (options.forMs !== undefined) assertDuration(options.forMs, 'forMs', 1);
    const lockOptions =
      kindName === 'semaphore' ? { limit: options.limit ?? 1 } : ELSEWHERE_OPTIONS[kindName];
    if (!lockOptions) throw new TypeError(`Unknown kind "${String(kindName)}" for holdElsewhere()`);
    const kind = this.backend.kinds.kindFor(lockOptions);
    const request: AttemptRequest = {
      key,
      names: this.keys.names(key, kind.tag),
      owner: this.engine.runtime.randomId(),
      holdId: this.engine.runtime.randomId(),
      leaseMs: options.forMs ?? MAX_DURATION_MS,
      reenter: false,
      options: lockOptions,
    };
    const result = await kind.attempt(request);
    if (result.status !== 'granted') {
      await kind.abandon?.(request); // leaves no queue place or writer marker behind
      throw new Error(`holdElsewhere(${quoteKey(key)}): the key is already held (${kindName})`);
    }
    return this.track(key, kind, request, result.fencingToken);
  }

  /** Releases every hold elsewhere on `key`; true when there was one. */
  async releaseElsewhere(key: string): Promise<boolean> {
    const holds = [...(this.elsewhere.get(key) ?? [])];
    const results = await Promise.all(holds.map((h) => h.release()));
    return results.includes(true);
  }

  /**
   * Takes `key`'s lock away from whoever holds it (all kinds), as a DEL or a takeover by another
   * owner would, and wakes its waiters. The engine of the holder learns it at its next renewal (the
   * watchdog round, every `renewEveryMs`, 50 ms by default in tests; or extend()), and then aborts
   * the handle's signal with LockLostError. A fixed-lease lock has no renewals: its holder learns
   * it at release() (false) or at the end of its lease, exactly as with Redis. Returns the number
   * of locks taken away.
   */
  loseLock(key: string, options: LoseLockOptions = {}): number {
    assertLockKey(key);
    const { store } = this.backend;
    let lost = 0;
    for (const tag of KIND_TAG_LIST) {
      const names = this.keys.names(key, tag);
      if (!store.exists(names.lock)) continue;
      lost++;
      const ttl = store.pttl(names.lock);
      const type = store.type(names.lock);
      if (options.takeOver && type === 'string') {
        store.set(names.lock, this.engine.runtime.randomId(), ttl);
      } else if (options.takeOver && type === 'hash' && store.hexists(names.lock, 'owner')) {
        store.hset(names.lock, 'owner', this.engine.runtime.randomId());
      } else {
        // Shared-holder kinds keep their holders in `aux`; the fair lock's `aux` is its queue (kept).
        store.del(names.lock, ...(tag === 'rw' || tag === 'sem' ? [names.aux] : []));
      }
      store.publish(names.channel, 'released');
    }
    return lost;
  }

  /** The in-memory keyspace (shared by the engines built with `replicaOf`). */
  get store(): MemoryStore {
    return this.backend.store;
  }

  /** Makes every backend call reject with a LockRedisError (cause: `error`) until recoverBackend(). */
  failBackend(error: Error = new Error('simulated Redis outage')): void {
    this.backend.store.failure = error;
  }

  /** Ends failBackend(): calls succeed again (state from before the failure is still there). */
  recoverBackend(): void {
    this.backend.store.failure = undefined;
  }

  /** True when any lock (any kind) is held on `key`, here or elsewhere. */
  isLocked(key: string): boolean {
    assertLockKey(key);
    return KIND_TAG_LIST.some((tag) => this.backend.store.exists(this.keys.names(key, tag).lock));
  }

  private track(key: string, kind: LockKind, request: AttemptRequest, fencingToken: number): ElsewhereHold {
    const holds = this.elsewhere.get(key) ?? new Set();
    this.elsewhere.set(key, holds);
    let done = false;
    const hold: ElsewhereHold = {
      key,
      fencingToken,
      release: async () => {
        if (done) return false;
        done = true;
        holds.delete(hold);
        if (holds.size === 0) this.elsewhere.delete(key);
        return (await kind.release(request)) !== 'not-held';
      },
    };
    holds.add(hold);
    return hold;
  }
}
