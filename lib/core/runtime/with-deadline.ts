import type { Deadline } from './deadlines';
import type { Runtime } from './runtime';

/**
 * Settles with `work`, or when `ms` pass first: rejects with `onTimeout()` (an Error) or, when
 * `onTimeout` is omitted, resolves undefined. With a `signal`, its abort ends the wait at once, resolving
 * undefined (the caller is closing). The bound is a deadline on the process' one timer (deadlines.ts),
 * always removed when the wait settles, and it keeps the process alive meanwhile; a late failure of
 * `work` after the deadline is swallowed (the caller has already moved on).
 */
export function withDeadline<T>(
  runtime: Runtime,
  work: Promise<T>,
  ms: number,
  onTimeout: () => Error,
): Promise<T>;
export function withDeadline<T>(runtime: Runtime, work: Promise<T>, ms: number): Promise<T | undefined>;
export function withDeadline<T>(
  runtime: Runtime,
  work: Promise<T>,
  ms: number,
  end: { readonly onTimeout?: () => Error; readonly signal: AbortSignal },
): Promise<T | undefined>;
export function withDeadline<T>(
  runtime: Runtime,
  work: Promise<T>,
  ms: number,
  end?: (() => Error) | { readonly onTimeout?: () => Error; readonly signal: AbortSignal },
): Promise<T | undefined> {
  const onTimeout = typeof end === 'function' ? end : end?.onTimeout;
  const signal = typeof end === 'function' ? undefined : end?.signal;
  let due: Deadline | undefined;
  let stop: (() => void) | undefined;
  const deadline = new Promise<undefined>((resolve, reject) => {
    due = {
      at: runtime.now() + ms,
      slot: -1,
      keepsAlive: true,
      expire: () => (onTimeout ? reject(onTimeout()) : resolve(undefined)),
    };
    runtime.deadlines.schedule(due);
    if (signal) {
      stop = () => resolve(undefined);
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    }
  });
  work.catch(() => undefined);
  return Promise.race([work, deadline]).finally(() => {
    runtime.deadlines.remove(due!);
    if (stop) signal?.removeEventListener('abort', stop);
  });
}

/**
 * A command sent near the end of a wait may take this much longer than `waitMs` before it is given
 * up on: a Redis that hangs cannot hold a call more than `waitMs` + this margin.
 */
export const ATTEMPT_MARGIN_MS = 400;
