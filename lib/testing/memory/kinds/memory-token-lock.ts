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
import { decodeRenewCode, MemoryCommands } from '../memory-commands';
import { renewOwned } from './memory-renew';

/**
 * The plain token lock in memory: token-acquire.lua / token-release.lua / renew.lua, with the same
 * replies and reserved token blocks (cohorts); shares the mutex's key, so the two exclude each other.
 */
export class MemoryTokenLock implements LockKind {
  readonly tag = 'm' as const;
  readonly exclusive = true;
  readonly reentrant = false;
  /** Grants reserve fencing tokens for per-process cohorts (local hand-offs), as on Redis. */
  readonly cohorts = true;

  constructor(private readonly commands: MemoryCommands) {}

  async attempt(r: AttemptRequest): Promise<AttemptResult> {
    const reply = await this.commands.run(() => this.acquire(r), 'token-acquire', r.key);
    return decodeAttemptReply(reply, r.key, [r.names.lock]);
  }

  async release(h: HoldRef): Promise<ReleaseResult> {
    const { store } = this.commands;
    const code = await this.commands.run(
      (): 0 | 1 => {
        if (store.type(h.names.lock) !== 'string' || store.getString(h.names.lock) !== h.owner) return 0;
        store.del(h.names.lock);
        store.publish(h.names.channel, 'released');
        return 1;
      },
      'token-release',
      h.key,
    );
    return code === 1 ? 'released' : 'not-held';
  }

  async renew(requests: readonly RenewRequest[]): Promise<RenewResult[]> {
    const codes = await this.commands.run(() => renewOwned(this.commands.store, requests), 'renew');
    return codes.map(decodeRenewCode);
  }

  /** token-acquire.lua. */
  private acquire(r: AttemptRequest): AttemptReply {
    const { store } = this.commands;
    const { lock, fence } = r.names;
    const reserve = r.reserveTokens ?? 1;
    if (!store.exists(lock)) {
      store.setString(lock, r.owner, r.leaseMs);
      return [1, this.commands.nextFence(fence, reserve)];
    }
    const type = store.type(lock);
    const pttl = store.pttl(lock);
    if (type !== 'string') {
      // A hash with a lease is a reentrant mutex of the same name (busy); anything else is foreign.
      if (type !== 'hash' || pttl < 0) return [-1, type];
      return [0, pttl];
    }
    // Our own grant, asked for again (a re-sent command): the counter still ends our reserved block.
    if (store.getString(lock) === r.owner) {
      const last = store.getString(fence);
      return [1, last !== undefined ? Number(last) - reserve + 1 : this.commands.nextFence(fence, reserve)];
    }
    if (pttl < 0) return [-1, 'string'];
    return [0, pttl];
  }
}
