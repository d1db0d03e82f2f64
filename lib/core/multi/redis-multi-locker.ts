import calculateSlot from 'cluster-key-slot';
import { LockWrongTypeError } from '../errors';
import type { ScriptRunner } from '../redis/redis-gateway';
import { defineScript } from '../redis/script-library';
import type { GroupAttempt, GroupResult, MultiKeyLocker, MultiLockTarget } from './multi-key-locker';

/** {1, token...} granted, {0, pttl, i} key i busy, {-1, type, i} key i foreign. */
type MultiAcquireReply = [1, ...number[]] | [0, number, number] | [-1, string, number];

const ACQUIRE = defineScript<
  [owner: string, holdId: string, leaseMs: number, fenceTtlMs: number, reentrant: '0' | '1'],
  MultiAcquireReply
>('multi-acquire');

/**
 * Multi-key locks on one Redis or a Cluster (scripts/multi-acquire.lua): every key of one Cluster
 * slot (every key, on a single Redis) in one script call; on a Cluster one group per slot.
 */
export class RedisMultiLocker implements MultiKeyLocker {
  constructor(
    private readonly gateway: ScriptRunner,
    private readonly fenceTtlMs: number,
  ) {}

  groups(targets: readonly MultiLockTarget[]): MultiLockTarget[][] {
    if (!this.gateway.cluster) return [[...targets]];
    const bySlot = new Map<number, MultiLockTarget[]>();
    for (const t of targets) {
      const slot = calculateSlot(t.names.lock);
      const group = bySlot.get(slot) ?? [];
      group.push(t);
      bySlot.set(slot, group);
    }
    // Map keeps insertion order: groups are ordered by their first key in the global order.
    return [...bySlot.values()];
  }

  async attempt(r: GroupAttempt): Promise<GroupResult> {
    const keys = r.targets.flatMap((t) => [t.names.lock, t.names.fence, t.names.aux]);
    const first = r.targets[0]!.key;
    const reply = await this.gateway.run(
      ACQUIRE,
      keys,
      [r.owner, r.holdId, r.leaseMs, this.fenceTtlMs, r.kind.reentrant ? '1' : '0'],
      {
        userKey: first,
        onLateReply: (late) => {
          if (late[0] === 1) this.giveBack(r);
        },
        timeoutMs: r.timeoutMs,
      },
    );
    if (reply[0] === 1) return { status: 'granted', fencingTokens: reply.slice(1).map(Number) };
    const index = Number(reply[2]) - 1;
    const target = r.targets[index] ?? r.targets[0]!;
    if (reply[0] === 0) return { status: 'busy', index, retryAfterMs: Number(reply[1]) };
    throw new LockWrongTypeError(
      target.key,
      target.names.lock,
      `holds a ${String(reply[1])} without a lease, which is not a lock`,
    );
  }

  private giveBack(r: GroupAttempt): void {
    for (const t of r.targets) {
      r.kind
        .release({ key: t.key, names: t.names, owner: r.owner, holdId: r.holdId, options: r.options })
        .catch(() => undefined);
    }
  }
}
