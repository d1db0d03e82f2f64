import type {
  AttemptRequest,
  AttemptResult,
  HoldRef,
  LockKind,
  ReleaseResult,
  RenewRequest,
  RenewResult,
} from '../../../core/kinds/lock-kind';
import { AttemptReply, decodeAttemptReply } from '../../../core/kinds/reply';
import { decodeReleaseCode, decodeRenewCode, MemoryCommands } from '../memory-commands';
import { releaseOwnedHold, renewOwned } from './memory-renew';

/**
 * The reentrant mutex in memory: mutex-acquire.lua / mutex-release.lua / renew.lua, line by line,
 * with the same replies (decoded by the same decoder), the waiters zset (`…:m:aux`), reserved token
 * blocks and the cohort-end reservation `{ x = '+<process>' }`, so per-process cohorts run as on Redis.
 */
export class MemoryMutex implements LockKind {
  readonly tag = 'm' as const;
  readonly exclusive = true;
  readonly reentrant = true;
  /** Grants reserve fencing tokens for per-process cohorts (local hand-offs), as on Redis. */
  readonly cohorts = true;

  constructor(private readonly commands: MemoryCommands) {}

  async attempt(r: AttemptRequest): Promise<AttemptResult> {
    const reply = await this.commands.run(() => this.acquire(r), 'mutex-acquire', r.key);
    return decodeAttemptReply(reply, r.key, [r.names.lock]);
  }

  async release(h: HoldRef): Promise<ReleaseResult> {
    const code = await this.commands.run(
      () => releaseOwnedHold(this.commands.store, h, false),
      'mutex-release',
      h.key,
    );
    return decodeReleaseCode(code);
  }

  async renew(requests: readonly RenewRequest[]): Promise<RenewResult[]> {
    const codes = await this.commands.run(() => renewOwned(this.commands.store, requests), 'renew');
    return codes.map(decodeRenewCode);
  }

  /** mutex-acquire.lua. */
  private acquire(r: AttemptRequest): AttemptReply {
    const { store } = this.commands;
    const { lock, fence, aux: waiters } = r.names;
    const process = r.process !== undefined && r.process !== '' ? r.process : r.owner;

    // A busy attempt records its process as waiting, so the release publishes a wake-up.
    const busy = (pttl: number): AttemptReply => {
      if (r.reenter) return [-2];
      if (!store.zset(waiters)?.has(process)) store.zadd(waiters, store.nowUs(), process);
      store.pexpire(waiters, pttl + 2000);
      return [0, pttl];
    };

    const type = store.type(lock);
    if (type !== 'hash' && type !== 'none') {
      // A token lock (a string with a lease) of the same name is busy; anything else is foreign.
      const pttl = store.pttl(lock);
      if (type !== 'string' || pttl < 0) return [-1, type];
      return busy(pttl);
    }
    const fields = store.hash(lock);
    const owner = fields?.get('owner');
    if (fields && owner === r.owner) {
      store.hset(lock, { [r.holdId]: '1' });
      if (store.pttl(lock) < r.leaseMs) store.pexpire(lock, r.leaseMs);
      return [2, Number(fields.get('fence'))];
    }
    const pttl = store.pttl(lock);
    if (owner !== undefined) {
      if (pttl < 0) return [-1, 'hash'];
      return busy(pttl);
    }
    // No owner field: a free key, a lock reserved for one process for a moment, or a hash that is not a lock.
    if (pttl !== -2) {
      const reserved = fields?.get('x');
      if (reserved === undefined || pttl < 0) return [-1, 'hash'];
      if (reserved !== `+${process}`) return busy(pttl);
      store.del(lock);
    }
    if (r.reenter) return [-2];
    const token = this.commands.nextFence(fence, r.reserveTokens ?? 1);
    store.hset(lock, { owner: r.owner, fence: String(token), [r.holdId]: '1' });
    store.pexpire(lock, r.leaseMs);
    store.zrem(waiters, process);
    return [1, token];
  }
}
