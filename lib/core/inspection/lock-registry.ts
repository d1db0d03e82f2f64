import type { LockGrant } from '../grant/lock-grant';
import type { Runtime, RuntimeTimer } from '../runtime/runtime';
import type { LocalWaitQueues } from '../waiting/local-wait-queues';
import type { InspectionKeys } from './inspection-keys';
import type { InspectionTarget } from './inspection-target';
import type { LockOwner } from '../options/lock-info';
import { grantField, IDENTITY_FIELD, waitingField } from './registry-record';
import { writeRecord, type RecordWrite } from './registry-write';
import { withDeadline } from '../runtime/with-deadline';
import { refusalOf } from './refusal';

/** How often an engine checks whether its registry record must be written. */
export const REGISTRY_SYNC_MS = 250;
/** close() waits at most this long to remove the record. */
const CLOSE_DROP_MS = 1000;

/** What the registry of one engine reads and where it writes. */
export interface LockRegistryDeps {
  readonly engineId: string;
  readonly runtime: Runtime;
  readonly identity: LockOwner;
  readonly keys: InspectionKeys;
  readonly target: InspectionTarget;
  /** The engine's live grants (HeldLocks.grants). */
  readonly grants: { readonly size: number } & Iterable<LockGrant>;
  readonly queues: LocalWaitQueues;
  /** Full rewrite this often (the watchdog period): a record Redis lost comes back within it. */
  readonly heartbeatMs: number;
  readonly commandTimeoutMs: number;
  /** The record outlives a silent engine by this much at least (watchdog lease + period). */
  readonly baseTtlMs: number;
  /**
   * Redis refused (`reason`) or accepts again (`undefined`) the registry write; called once per
   * change, never per tick (the engine emits it as its `refusal` event).
   */
  readonly onRefusal?: (reason: string | undefined) => void;
}

/**
 * This engine's entry in the registry of held locks: a hash per engine (who it is, each grant with
 * owner id, token, hold count and time of grant, each lock's local waiter count) listed in one zset
 * per key prefix, all under one hash tag. It costs no command on the lock path: a timer (running
 * while the engine holds or waits for locks) writes the difference at most every 250 ms (one
 * MULTI/EXEC), and rewrites it in full with the watchdog's period so it stays alive as long as the
 * locks do. A crashed engine's record expires with its locks' leases. list() reads it; inspect() reads Redis'
 * own lock state and only borrows owner details from it.
 */
export class LockRegistry {
  private readonly written = new Map<string, string>();
  private recordWritten = false;
  private needFull = true;
  private nextFullAt = 0;
  /** Locks with local waiters at the previous tick. */
  private waitingBefore = new Set<string>();
  /**
   * Runs from construction to close(), unref'd: an idle tick (nothing held or waited for, no record)
   * is two size checks, and the lock path never has to tell the registry it is busy.
   */
  private readonly timer: RuntimeTimer;
  private running?: Promise<void>;
  private closed = false;
  /** Wall-clock offset of the monotonic clock, taken once: grant times stay stable in the record. */
  private readonly epochOffset: number;
  private readonly identityValue: string;
  /** What Redis refuses now (reported once per change). */
  private refused?: string;

  constructor(private readonly deps: LockRegistryDeps) {
    const { host, pid, app } = deps.identity;
    const { runtime } = deps;
    this.epochOffset = runtime.wallNow() - runtime.now();
    this.identityValue = JSON.stringify({ host, pid, app, since: runtime.wallNow() });
    this.timer = runtime.setRepeating(() => void this.tick(), REGISTRY_SYNC_MS);
  }

  /** Stops the timer and removes this engine's record (before the connections close). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.timer.cancel();
    // A write in progress has its own deadline; waited for at most as long as the drop below.
    if (this.running) await withDeadline(this.deps.runtime, this.running, CLOSE_DROP_MS);
    // The record expires by itself: a Redis that is down or slow must not hold close() for long.
    const up = this.deps.target.gateways.some((g) => g.door.ready);
    if (this.recordWritten && up) await this.write({ op: 'drop' }, CLOSE_DROP_MS).catch(() => undefined);
  }

  private tick(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.running) return this.running;
    // Nothing held or waited for here, and no record left in Redis: nothing to write.
    if (!this.recordWritten && this.deps.grants.size === 0 && this.deps.queues.size === 0) {
      return Promise.resolve();
    }
    this.running = this.sync().finally(() => (this.running = undefined));
    return this.running;
  }

  private async sync(): Promise<void> {
    const fields = this.snapshot();
    if (fields.size === 1) {
      // Only the identity: nothing held or waited for long enough to report.
      if (!this.recordWritten) return;
      try {
        await this.write({ op: 'drop' });
        this.recordWritten = false;
        this.written.clear();
      } catch {
        // Redis trouble is reported by the connection events; the next tick tries again.
      }
      return;
    }
    const full = this.needFull || this.deps.runtime.now() >= this.nextFullAt;
    const set: string[] = [];
    const removed: string[] = [];
    for (const [field, value] of fields) {
      if (full || this.written.get(field) !== value) set.push(field, value);
    }
    if (!full) for (const field of this.written.keys()) if (!fields.has(field)) removed.push(field);
    if (!full && set.length === 0 && removed.length === 0) return;
    try {
      const replies = await this.write({ op: full ? 'full' : 'diff', set, removed, ttlMs: this.ttlMs() });
      if (replies.includes(-1)) {
        this.needFull = true;
        return;
      }
    } catch (err) {
      this.report(refusalOf(err), true);
      this.needFull = true; // the next tick writes the full record
      return;
    }
    this.report(undefined);
    this.written.clear();
    for (const [field, value] of fields) this.written.set(field, value);
    this.recordWritten = true;
    if (full) {
      this.needFull = false;
      this.nextFullAt = this.deps.runtime.now() + this.deps.heartbeatMs;
    }
  }

  /**
   * The record as it should be now: grants held for at least one sync period, and the local waiters
   * of locks that had waiters at the previous tick too. A lock taken and given back within
   * milliseconds (most of them) never costs a registry write; what an operator looks for — a lock
   * held or waited for a while — shows within 250–500 ms.
   */
  private snapshot(): Map<string, string> {
    const fields = new Map<string, string>([[IDENTITY_FIELD, this.identityValue]]);
    const settled = this.deps.runtime.now() - REGISTRY_SYNC_MS;
    for (const grant of this.deps.grants) {
      if (!grant.active || grant.grantedAt > settled) continue;
      const [field, value] = grantField(grant, this.epochOffset);
      fields.set(field, value);
    }
    const waiting = new Set<string>();
    for (const [lockName, count] of this.deps.queues.waiting()) {
      waiting.add(lockName);
      if (this.waitingBefore.has(lockName)) fields.set(waitingField(lockName), String(count));
    }
    this.waitingBefore = waiting;
    return fields;
  }

  /** The record's TTL: it outlives every lease this engine holds, and a missed heartbeat or two. */
  private ttlMs(): number {
    const now = this.deps.runtime.now();
    let longest = this.deps.baseTtlMs;
    for (const grant of this.deps.grants) {
      longest = Math.max(longest, Math.ceil(grant.expiresAt - now) + this.deps.heartbeatMs);
    }
    return longest;
  }

  private write(write: RecordWrite, timeoutMs = this.deps.commandTimeoutMs): Promise<number[]> {
    return writeRecord(this.deps, write, Math.min(timeoutMs, this.deps.commandTimeoutMs));
  }

  /**
   * Reports a refusal of the registry write (or that it works again) once per change. `failed` with
   * no refusal (a lost connection, a timeout) changes nothing: the connection events report those.
   */
  private report(refusal: string | undefined, failed = false): void {
    if (failed && refusal === undefined) return;
    if (this.refused === refusal) return;
    this.refused = refusal;
    this.deps.onRefusal?.(refusal);
  }
}
