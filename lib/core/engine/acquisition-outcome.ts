import { LockNotAcquiredError } from '../errors';
import type { AcquisitionContext } from './acquisition-context';
import { monotonicMs } from './ids';
import type { LockEvents } from './lock-events';

/** Why a wait ended without the lock. */
export type Failure = 'timeout' | 'aborted' | 'closed' | 'error';

/** A wait so far, as its outcome reports it: the key it names, when it began, what it saw. */
export interface WaitSummary {
  readonly key: string;
  readonly kindLabel: string;
  readonly started: number;
  readonly attempts: number;
  readonly tryOnly: boolean;
  readonly retryAfterMs: number;
}

/** Reports a wait that ended without the lock (`notAcquired`). */
export function emitNotAcquired(events: LockEvents, w: WaitSummary, reason: Failure): void {
  events.safeEmit('notAcquired', {
    key: w.key,
    kind: w.kindLabel,
    waitedMs: monotonicMs() - w.started,
    attempts: w.attempts,
    reason,
    tryOnly: w.tryOnly,
  });
}

/** Reports a grant of `key` (`acquired`), its request sent `waitedMs` after the wait began. */
export function emitAcquired(
  events: LockEvents,
  w: WaitSummary,
  key: string,
  waitedMs: number,
  fencingToken: number,
  extra?: { replicaAcks?: number; handedOver?: true },
): void {
  events.safeEmit('acquired', {
    key,
    kind: w.kindLabel,
    waitedMs,
    attempts: w.attempts,
    reentered: false,
    fencingToken,
    ...extra,
  });
}

/**
 * The wait ran out: reported, then null for tryOnly, else a LockNotAcquiredError whose reason
 * `reasonFor` words from the time waited.
 */
export function timedOut(
  ctx: AcquisitionContext,
  w: WaitSummary,
  reasonFor: (waited: number) => string | undefined,
): null {
  emitNotAcquired(ctx.events, w, 'timeout');
  if (w.tryOnly) return null;
  const waited = monotonicMs() - w.started;
  const reason = reasonFor(waited);
  const expected = ctx.retryAfter(w.key, w.retryAfterMs);
  throw new LockNotAcquiredError(w.key, waited, w.retryAfterMs, reason, expected);
}

/** Aborted: by the caller's signal, or by close(). */
export function abortedOut(ctx: AcquisitionContext, signal: AbortSignal | undefined, w: WaitSummary): never {
  if (ctx.closing.aborted && !signal?.aborted) {
    emitNotAcquired(ctx.events, w, 'closed');
    throw new LockNotAcquiredError(
      w.key,
      monotonicMs() - w.started,
      w.retryAfterMs,
      'the lock service is shutting down',
    );
  }
  emitNotAcquired(ctx.events, w, 'aborted');
  throw signal!.reason;
}
