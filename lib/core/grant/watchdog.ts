import type { Runtime, RuntimeTimer } from '../runtime/runtime';
import { SmallSet } from '../runtime/small-collections';
import type { LockGrant } from './lock-grant';
import type { LockKind } from '../kinds/lock-kind';

/** What a watchdog round did, for events and metrics. */
export interface RenewalRound {
  renewed: number;
  lost: number;
  failed: number;
}

/**
 * Keeps watchdog-leased locks alive: one timer for all of them, renewals batched per lock kind
 * (renew-batch.ts turns a batch into one command per 500 locks or per Cluster slot). Any renewal
 * that fails or finds the lock gone aborts that lock's signal at once; nothing fails silently. A
 * renewal that hangs (a partitioned connection) does not stack rounds; the grant's own deadline on
 * the process' one timer ends its lease locally at `localEnd` meanwhile.
 */
export class Watchdog {
  private readonly grants = new SmallSet<LockGrant>();
  private timer?: RuntimeTimer;
  private running = false;

  constructor(
    private readonly runtime: Runtime,
    private readonly periodMs: number,
    private readonly onRound: (round: RenewalRound) => void,
  ) {}

  add(grant: LockGrant): void {
    this.grants.add(grant);
    if (!this.timer) {
      // Never keeps the process alive: a held lock alone must not.
      this.timer = this.runtime.setRepeating(() => void this.tick(), this.periodMs);
    }
  }

  delete(grant: LockGrant): void {
    // The timer stops at its next tick if nothing is left: a lock taken and released over and over
    // (the uncontended path) then costs no timer per lock.
    this.grants.delete(grant);
  }

  get size(): number {
    return this.grants.size;
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** One renewal round, run by the timer. */
  private async tick(): Promise<void> {
    if (this.running) return; // a slow Redis must not stack rounds
    if (this.grants.size === 0) return this.stop();
    this.running = true;
    const round: RenewalRound = { renewed: 0, lost: 0, failed: 0 };
    try {
      const now = this.runtime.now();
      const byKind = new Map<LockKind, LockGrant[]>();
      for (const g of this.grants) {
        if (g.renewalLeaseMs(now) === 0) continue; // maxHoldMs reached: its timer ends it
        // Its last hold is being released. Renewing it is no use, and harmful after minHoldMs: that
        // release shortens the lease instead of deleting the lock, and a full-lease renewal run after
        // it kept a scheduled job's lock 30 s instead of half a period (ticks skipped everywhere).
        if (g.openHolds.size === 0) continue;
        // A blocked event loop can outlive the lease: then the lock is already gone, say so.
        if (now >= g.localEnd) {
          g.lose('expired');
          round.lost++;
          continue;
        }
        const list = byKind.get(g.kind) ?? [];
        list.push(g);
        byKind.set(g.kind, list);
      }
      await Promise.all([...byKind].map(([kind, list]) => this.renewKind(kind, list, round)));
    } finally {
      this.running = false;
      if (round.renewed + round.lost + round.failed > 0) this.onRound(round);
    }
  }

  private async renewKind(kind: LockKind, grants: LockGrant[], round: RenewalRound): Promise<void> {
    const sentAt = this.runtime.now();
    const leases = grants.map((g) => g.renewalLeaseMs(sentAt));
    const requests = grants.map((g, i) => g.renewRequest(sentAt, Math.max(1, leases[i]!)));
    try {
      const results = await kind.renew(requests);
      results.forEach((result, i) => {
        const g = grants[i]!;
        // Released meanwhile, or the release of its last hold is in flight: its result says nothing
        // about the holder (a release batched in a pipeline may be answered after a later renewal).
        if (!g.active || g.openHolds.size === 0) return;
        if (result === 'renewed') {
          g.renewed(sentAt, leases[i]!);
          round.renewed++;
        } else {
          g.lose(result === 'gone' ? 'deleted' : 'taken-over');
          round.lost++;
        }
      });
    } catch (err) {
      for (const g of grants) {
        if (!g.active || g.openHolds.size === 0) continue;
        g.lose('renewal-failed', err);
        round.failed++;
      }
    }
  }
}
