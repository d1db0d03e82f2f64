import type {
  LockKind,
  AttemptRequest,
  AttemptResult,
  HoldRef,
  ReleaseResult,
  RenewRequest,
  RenewResult,
} from './lock-kind';
import type { LockOptions } from '../options/lock-options';
import type { ScriptRunner } from '../redis/redis-gateway';
import { defineScript } from '../redis/script-library';
import {
  AttemptReply,
  decodeAttemptReply,
  HoldReleaseArgs,
  HoldReleaseReply,
  attemptCall,
  PublishCommand,
  releaseHold,
} from './script-replies';
import { HOLDERS_RENEW, renewPerSlot } from './renew-batch';

const ACQUIRE = defineScript<
  [
    owner: string,
    holdId: string,
    mode: 'r' | 'w',
    leaseMs: number,
    fenceTtlMs: number,
    reenterOnly: '0' | '1',
    markerTtlMs: number,
    channel: string,
    publish: PublishCommand,
  ],
  AttemptReply
>('read-write-acquire');
const RELEASE = defineScript<HoldReleaseArgs, HoldReleaseReply>('read-write-release');
const ABANDON = defineScript<[owner: string, channel: string, publish: PublishCommand], 0 | 1>(
  'read-write-abandon',
);

/**
 * Read-write lock (`mode: 'read' | 'write'`, like Redisson's RReadWriteLock): many readers or one
 * writer per key, both reentrant; the writer may take the read lock too (downgrade), a pure reader
 * asking for write gets LockUpgradeError.
 *
 * Redis layout (scripts/holders.lua): the `rw` hash keeps each owner's open holds plus the current
 * writer, the `rw:aux` zset each holder's own lease deadline by the server clock, so a stuck reader
 * expires alone instead of pinning the lock for everybody.
 *
 * Starvation: writers are preferred. A writer refused because the lock is held sets a marker that
 * makes new readers wait (held readers still re-enter) until the writer got in or gave up; it lives
 * `markerTtlMs` unless the writer's attempts refresh it, so a dead writer blocks readers that long at
 * most. As in java.util.concurrent, a reader that waits for another reader's context while a writer
 * queues behind the first one deadlocks until a wait times out: do not nest read locks across contexts.
 *
 * Fencing: every grant, read or write, takes the key's next token, so tokens still increase across all
 * holders. A writer's token fences writes; a reader's token only orders it after every earlier
 * grant (readers share the lock, so it proves no exclusive access).
 */
export class ReadWriteLock implements LockKind {
  readonly tag = 'rw' as const;
  /** Readers share; writers are exclusive (see isExclusive). */
  readonly exclusive = false;
  readonly reentrant = true;

  constructor(
    private readonly gateway: ScriptRunner,
    private readonly fenceTtlMs: number,
    private readonly markerTtlMs: number,
  ) {}

  /** Only the local head writer attempts; every local reader may. */
  isExclusive(options: LockOptions): boolean {
    return options.mode === 'write';
  }

  async attempt(r: AttemptRequest): Promise<AttemptResult> {
    const reply = await this.gateway.run(
      ACQUIRE,
      [r.names.lock, r.names.aux, r.names.fence],
      [
        r.owner,
        r.holdId,
        r.options.mode === 'write' ? 'w' : 'r',
        r.leaseMs,
        this.fenceTtlMs,
        r.reenter ? '1' : '0',
        this.markerTtlMs,
        r.names.channel,
        this.gateway.publishCommand,
      ],
      attemptCall(this, r, this),
    );
    return decodeAttemptReply(reply, r.key, [r.names.lock, r.names.aux]);
  }

  release(h: HoldRef): Promise<ReleaseResult> {
    // 'released' = this owner's last hold is gone (other readers may still hold the lock).
    return releaseHold(this.gateway, RELEASE, h);
  }

  renew(requests: readonly RenewRequest[]): Promise<RenewResult[]> {
    return renewPerSlot(this.gateway, HOLDERS_RENEW, requests, (r) => [r.names.lock, r.names.aux]);
  }

  async abandon(r: AttemptRequest): Promise<void> {
    if (r.options.mode !== 'write') return; // only writers leave something behind while waiting
    await this.gateway
      .run(ABANDON, [r.names.lock, r.names.aux], [r.owner, r.names.channel, this.gateway.publishCommand], {
        userKey: r.key,
      })
      .catch(() => undefined); // the marker expires by itself
  }
}
