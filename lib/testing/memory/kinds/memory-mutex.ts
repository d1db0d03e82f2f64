import type {
  AttemptRequest,
  AttemptResult,
  HoldRef,
  LockKind,
  ReleaseResult,
  RenewRequest,
  RenewResult,
} from '../../../core/kinds/lock-kind';
import { busy, granted, MemoryCommands, notHeld } from '../memory-commands';
import { releaseOwnedHold, renewOwned } from './memory-renew';

/** The reentrant mutex in memory: mutex-acquire.lua / mutex-release.lua / renew.lua, same replies. */
export class MemoryMutex implements LockKind {
  readonly tag = 'm' as const;
  readonly exclusive = true;
  readonly reentrant = true;

  constructor(private readonly commands: MemoryCommands) {}

  attempt(r: AttemptRequest): Promise<AttemptResult> {
    const { store } = this.commands;
    return this.commands.run(
      () => {
        const lock = r.names.lock;
        const type = store.type(lock);
        if (type === 'none') {
          if (r.reenter) return notHeld;
          const token = this.commands.nextFence(r.names.fence);
          store.hset(lock, { owner: r.owner, fence: String(token), [r.holdId]: '1' });
          store.pexpire(lock, r.leaseMs);
          return granted(token);
        }
        const pttl = store.pttl(lock);
        const fields = store.hash(lock);
        if (fields?.get('owner') === r.owner) {
          store.hset(lock, { [r.holdId]: '1' });
          if (pttl < r.leaseMs) store.pexpire(lock, r.leaseMs);
          return granted(Number(fields.get('fence')), true);
        }
        if (r.reenter) return notHeld;
        return busy(pttl);
      },
      'mutex-acquire',
      r.key,
    );
  }

  release(h: HoldRef): Promise<ReleaseResult> {
    return this.commands.run(
      () => releaseOwnedHold(this.commands.store, h.names.lock, h.owner, h.holdId, h.names.channel),
      'mutex-release',
      h.key,
    );
  }

  renew(requests: readonly RenewRequest[]): Promise<RenewResult[]> {
    return this.commands.run(() => renewOwned(this.commands.store, requests), 'renew');
  }
}
