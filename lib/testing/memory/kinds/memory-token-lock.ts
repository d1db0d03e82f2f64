import type {
  AttemptRequest,
  AttemptResult,
  HoldRef,
  LockKind,
  ReleaseResult,
  RenewRequest,
  RenewResult,
} from '../../../core/kinds/lock-kind';
import { busy, granted, MemoryCommands } from '../memory-commands';
import { renewOwned } from './memory-renew';

/** The plain token lock in memory: token-acquire.lua / token-release.lua; shares the mutex's key. */
export class MemoryTokenLock implements LockKind {
  readonly tag = 'm' as const;
  readonly exclusive = true;
  readonly reentrant = false;

  constructor(private readonly commands: MemoryCommands) {}

  attempt(r: AttemptRequest): Promise<AttemptResult> {
    const { store } = this.commands;
    return this.commands.run(
      () => {
        const lock = r.names.lock;
        if (!store.exists(lock)) {
          store.setString(lock, r.owner, r.leaseMs);
          return granted(this.commands.nextFence(r.names.fence));
        }
        if (store.getString(lock) === r.owner) {
          const last = Number(store.getString(r.names.fence));
          return granted(last || this.commands.nextFence(r.names.fence));
        }
        return busy(store.pttl(lock));
      },
      'token-acquire',
      r.key,
    );
  }

  release(h: HoldRef): Promise<ReleaseResult> {
    const { store } = this.commands;
    return this.commands.run(
      () => {
        if (store.getString(h.names.lock) !== h.owner) return 'not-held';
        store.del(h.names.lock);
        store.publish(h.names.channel);
        return 'released';
      },
      'token-release',
      h.key,
    );
  }

  renew(requests: readonly RenewRequest[]): Promise<RenewResult[]> {
    return this.commands.run(() => renewOwned(this.commands.store, requests), 'renew');
  }
}
