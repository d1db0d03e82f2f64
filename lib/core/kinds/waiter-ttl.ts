/**
 * How long a waiter's entry in Redis (fair-lock queue place, writer-waiting marker) lives without a
 * refresh. A live waiter attempts at least once per backoff cap (128 ms by default), so four caps
 * plus two seconds of slack for a slow event loop or Redis keep live waiters in place, while a dead
 * waiter holds up the others for at most this long (2.5 s by default).
 */
export function waiterTtlMs(maxBackoffMs: number): number {
  return 4 * maxBackoffMs + 2000;
}
