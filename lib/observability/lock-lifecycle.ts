import type { LockLostReason } from '../core/public';
import type { LockEventMap } from '../core/public';
import type { LockEvents } from '../core/public';

/** How one acquisition ended: got the lock, or why not (`busy`: tryAcquire resolved null). */
export type LockWaitOutcome = 'acquired' | 'busy' | 'timeout' | 'aborted' | 'error' | 'closed';

/** One acquisition, when its outcome is known. */
export interface LockWait {
  key: string;
  kind: string;
  outcome: LockWaitOutcome;
  attempts: number;
  waitedMs: number;
  reentered: boolean;
  fencingToken?: number;
}

/**
 * How a grant ended; `disposed` when the observer stopped while it was held. `tracked` is false for
 * a loss of a grant taken before observing began (counted as a loss, but it has no hold to end).
 */
export interface LockHoldEnd {
  end: 'released' | 'lost' | 'disposed';
  tracked: boolean;
  heldMs?: number;
  lostReason?: LockLostReason;
  error?: Error;
  /** The lost lock's key (a loss of an untracked grant has no state to carry it). */
  key?: string;
}

/** What a telemetry backend does with the lifecycle; `S` is its per-grant state (e.g. a span). */
export interface LockLifecycleSink<S> {
  wait(wait: LockWait): void;
  holdStarted(key: string, kind: string, fencingToken: number): S;
  holdEnded(state: S | undefined, kind: string, end: LockHoldEnd): void;
  renewalFailed(count: number): void;
}

/** A running observation: the grants it tracks now, and the way to stop it. */
export interface LockLifecycleObserver {
  /** Grants acquired since observing began and not yet released or lost. */
  readonly held: number;
  /** Removes the listeners and ends every tracked grant as `disposed`. Idempotent. */
  dispose(): void;
}

interface TrackedHold<S> {
  state: S;
  kind: string;
  /** Open holds on the grant: the first acquire plus re-entries. */
  depth: number;
}

/**
 * Turns engine events into waits and holds for a telemetry sink. A grant is named by its key and
 * fencing token (unique per key); re-entries count as holds on it, so the grant ends at the release
 * of its last hold or at its loss.
 */
export function observeLockLifecycle<S>(
  events: LockEvents,
  sink: LockLifecycleSink<S>,
): LockLifecycleObserver {
  const holds = new Map<string, TrackedHold<S>>();
  const onAcquired = acquiredHandler(holds, sink);
  const onNotAcquired = notAcquiredHandler(sink);
  const onReleased = releasedHandler(holds, sink);
  const onLost = lostHandler(holds, sink);
  const onRenewed = (e: LockEventMap['renewed'][0]) => {
    if (e.failed > 0) sink.renewalFailed(e.failed);
  };

  events.on('acquired', onAcquired);
  events.on('notAcquired', onNotAcquired);
  events.on('released', onReleased);
  events.on('lost', onLost);
  events.on('renewed', onRenewed);
  let disposed = false;
  return {
    get held() {
      return holds.size;
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      events.off('acquired', onAcquired);
      events.off('notAcquired', onNotAcquired);
      events.off('released', onReleased);
      events.off('lost', onLost);
      events.off('renewed', onRenewed);
      for (const tracked of holds.values())
        sink.holdEnded(tracked.state, tracked.kind, { end: 'disposed', tracked: true });
      holds.clear();
    },
  };
}

/** A grant's id: its key and fencing token (unique per key). */
function grantIdOf(key: string, fencingToken: number): string {
  return `${fencingToken}\u0000${key}`;
}

/** `acquired`: a wait that got the lock, and a new hold (or one more on a tracked grant). */
function acquiredHandler<S>(holds: Map<string, TrackedHold<S>>, sink: LockLifecycleSink<S>) {
  return (e: LockEventMap['acquired'][0]) => {
    sink.wait({
      key: e.key,
      kind: e.kind,
      outcome: 'acquired',
      attempts: e.attempts,
      waitedMs: e.waitedMs,
      reentered: e.reentered,
      fencingToken: e.fencingToken,
    });
    const grantId = grantIdOf(e.key, e.fencingToken);
    const tracked = holds.get(grantId);
    if (tracked) tracked.depth++;
    else if (!e.reentered) {
      holds.set(grantId, { state: sink.holdStarted(e.key, e.kind, e.fencingToken), kind: e.kind, depth: 1 });
    }
  };
}

/** `notAcquired`: a wait that did not get the lock. */
function notAcquiredHandler<S>(sink: LockLifecycleSink<S>) {
  return (e: LockEventMap['notAcquired'][0]) => {
    // A single attempt (tryAcquire, waitMs 0, a skipped scheduled run) that found the lock busy got
    // its expected answer: `busy`, not a `timeout` (which telemetry reports as an error).
    const single = e.tryOnly || e.waitMs === 0;
    const outcome = e.reason === 'timeout' ? (single ? 'busy' : 'timeout') : e.reason;
    sink.wait({
      key: e.key,
      kind: e.kind,
      outcome,
      attempts: e.attempts,
      waitedMs: e.waitedMs,
      reentered: false,
    });
  };
}

/** `released`: one hold fewer; the grant ends at the release of its last hold. */
function releasedHandler<S>(holds: Map<string, TrackedHold<S>>, sink: LockLifecycleSink<S>) {
  return (e: LockEventMap['released'][0]) => {
    const grantId = grantIdOf(e.key, e.fencingToken);
    const tracked = holds.get(grantId);
    if (!tracked) return;
    tracked.depth--;
    if (tracked.depth > 0 && e.result !== 'released' && e.result !== 'not-held') return;
    holds.delete(grantId);
    sink.holdEnded(tracked.state, tracked.kind, { end: 'released', tracked: true, heldMs: e.heldMs });
  };
}

/** `lost`: the grant ends at its loss. */
function lostHandler<S>(holds: Map<string, TrackedHold<S>>, sink: LockLifecycleSink<S>) {
  return (e: LockEventMap['lost'][0]) => {
    const grantId = grantIdOf(e.key, e.fencingToken);
    const tracked = holds.get(grantId);
    holds.delete(grantId);
    sink.holdEnded(tracked?.state, e.kind, {
      end: 'lost',
      tracked: tracked !== undefined,
      heldMs: e.heldMs,
      lostReason: e.reason,
      error: e.error,
      key: e.key,
    });
  };
}
