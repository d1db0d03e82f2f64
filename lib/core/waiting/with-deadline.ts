/**
 * Settles with `work`, or when `ms` pass first: rejects with `onTimeout()` (an Error) or, when
 * `onTimeout` is omitted, resolves undefined. The timer is always cleared, and a late failure of
 * `work` after the deadline is swallowed (the caller has already moved on).
 */
export function withDeadline<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T>;
export function withDeadline<T>(work: Promise<T>, ms: number): Promise<T | undefined>;
export function withDeadline<T>(
  work: Promise<T>,
  ms: number,
  onTimeout?: () => Error,
): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<undefined>((resolve, reject) => {
    timer = setTimeout(() => (onTimeout ? reject(onTimeout()) : resolve(undefined)), ms);
  });
  work.catch(() => undefined);
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/**
 * A command sent near the end of a wait may take this much longer than `waitMs` before it is given
 * up on: a Redis that hangs cannot hold a call more than `waitMs` + this margin.
 */
export const ATTEMPT_MARGIN_MS = 400;
