// The one drift rule: how much sooner than Redis this process considers a lease over.

/**
 * Redlock's clock-drift allowance, applied to every lease: 1 % of the lease plus 2 ms. A lease ends
 * in this process that much before Redis can expire it, so a holder learns of a loss before another
 * process can be granted the lock, even when its timer fires a little late or its clock runs up to
 * 1 % slow against the server's (see docs/GUARANTEES.md, "Leases end early"). RedLock uses the same
 * allowance for its validity.
 */
export const DRIFT_FACTOR = 0.01;
/** The fixed part of the drift allowance, in ms (timer granularity). */
export const DRIFT_FLOOR_MS = 2;

/** The drift allowance of a lease of `leaseMs`, in ms. */
export function leaseDriftMs(leaseMs: number): number {
  return Math.ceil(leaseMs * DRIFT_FACTOR) + DRIFT_FLOOR_MS;
}

/**
 * When a lease of `leaseMs` asked for by a request sent at `sentAt` (monotonic) is over in this
 * process: the drift allowance before Redis can expire it.
 */
export function localLeaseEnd(sentAt: number, leaseMs: number): number {
  return sentAt + leaseMs - leaseDriftMs(leaseMs);
}
