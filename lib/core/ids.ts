import { randomBytes } from 'node:crypto';

/** An unguessable id (20 random bytes, base64url): owner tokens and hold ids. */
export function randomId(): string {
  return randomBytes(20).toString('base64url');
}

/** Monotonic milliseconds: lease and wait arithmetic never follows wall-clock jumps. */
export function monotonicMs(): number {
  return performance.now();
}
