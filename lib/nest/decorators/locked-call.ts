// Past the core's public surface: prepared options skip validation on every call, and withLockSignal
// adds the unsubscribe signal without validating them again.
import { isObservable, lastValueFrom, Observable } from 'rxjs';
import { LockNotAcquiredError, type LockHandle, type LockOptions, type MultiLockHandle } from '../../core';
import { prepareLockOptions, withLockSignal } from '../../core/internal';
import type { LockKeyBuilder } from '../lock-key-template';
import type { LockServiceApi } from '../lock-service-binding';
import { defaultScheduledHoldMs } from './scheduled-hold';

/** A decorated method's lock, compiled once at decoration time. */
export interface LockedCall {
  readonly where: string;
  readonly buildKey: LockKeyBuilder;
  readonly skipWhenBusy: boolean;
  /** Validated once; with `onBusy: 'skip'` on a scheduled method, the default minHoldMs is added on first call. */
  options: LockOptions;
  scheduledDefaultsApplied?: boolean;
}

/** A decorated method, as the decorator wraps it: its lock, its body and where its service comes from. */
export interface LockedMethod {
  readonly call: LockedCall;
  /** The method as written. */
  readonly method: (...args: unknown[]) => unknown;
  /** The wrapper that replaced it (the scheduler's metadata sits on it). */
  readonly wrapper: object;
  /** `design:returntype`: an Observable class makes the call an Observable. */
  readonly returnType: unknown;
  /** The lock service of the instance the method is called on. */
  serviceOf(thisArg: unknown): LockServiceApi;
}

/**
 * One call of a decorated method: an Observable when the method is declared to return one (the
 * lock is held from subscription to complete, error or unsubscribe), a Promise otherwise. Every
 * path goes through the service's public `using()`, so a fake of the public API serves as well.
 */
export function runLocked(locked: LockedMethod, thisArg: unknown, args: unknown[]): unknown {
  applyScheduledDefaults(locked.call, locked.wrapper);
  if (isObservableClass(locked.returnType)) return lockedObservable(locked, thisArg, args);
  return lockedPromise(locked, thisArg, args);
}

async function lockedPromise(locked: LockedMethod, thisArg: unknown, args: unknown[]): Promise<unknown> {
  const { call, method } = locked;
  const service = locked.serviceOf(thisArg);
  const request = { key: call.buildKey(thisArg, args), options: call.options };
  return runUsing(service, call, request, () => {
    const result = method.apply(thisArg, args);
    // An Observable from a method not declared to return one: hold the lock until it completes.
    return isObservable(result) ? lastValueFrom(result, { defaultValue: undefined }) : result;
  });
}

function lockedObservable(locked: LockedMethod, thisArg: unknown, args: unknown[]): Observable<unknown> {
  const { call, method } = locked;
  return new Observable<unknown>((subscriber) => {
    const unsubscribed = new AbortController();
    let inner: { unsubscribe(): void } | undefined;
    // Settles the critical section (so using() releases) when the source ends or the subscriber leaves.
    let endSection: (() => void) | undefined;
    const start = async () => {
      const service = locked.serviceOf(thisArg);
      const key = call.buildKey(thisArg, args);
      const signal = call.options.signal
        ? AbortSignal.any([call.options.signal, unsubscribed.signal])
        : unsubscribed.signal;
      const options = withLockSignal(call.options, signal);
      const outcome = await runUsing(service, call, { key, options }, () => {
        if (unsubscribed.signal.aborted) return undefined;
        const source = method.apply(thisArg, args);
        if (!isObservable(source))
          throw new TypeError(
            `${call.where} is declared to return an Observable but returned ${typeof source}`,
          );
        // Subscribed inside the critical section: the body's operators run in the lock's context.
        return new Promise<typeof COMPLETED>((resolve, reject) => {
          endSection = () => resolve(COMPLETED);
          inner = source.subscribe({
            next: (value) => subscriber.next(value),
            error: (error: unknown) => reject(new SourceError(error)),
            complete: () => resolve(COMPLETED),
          });
        });
      });
      // Released by now (using() settles after the release): only then is the end passed on.
      if (!unsubscribed.signal.aborted) subscriber.complete();
      return outcome;
    };
    start().catch((error: unknown) => {
      if (unsubscribed.signal.aborted) return;
      subscriber.error(error instanceof SourceError ? error.error : error);
    });
    return () => {
      unsubscribed.abort();
      inner?.unsubscribe();
      endSection?.();
    };
  });
}

const COMPLETED = Symbol('completed');

/** Carries the source's own error through using(), so it reaches the subscriber as it was thrown. */
class SourceError {
  constructor(readonly error: unknown) {}
}

/**
 * `using()` with the call's options; with `onBusy: 'skip'` a single attempt (or `waitMs`, if given)
 * and `undefined` without running the body when the lock stays busy. A busy error raised by the body
 * itself (a nested lock) is the body's and is never taken for a skip.
 */
function runUsing<T>(
  service: LockServiceApi,
  call: LockedCall,
  request: LockRequest,
  body: () => Promise<T> | T,
): Promise<T | undefined> {
  if (!call.skipWhenBusy) return usingKey(service, request, body);
  let entered = false;
  return usingKey(service, request, () => {
    entered = true;
    return body();
  }).catch((error: unknown) => {
    if (!entered && error instanceof LockNotAcquiredError) return undefined;
    throw error;
  });
}

/** The key (or keys) and options of one call. */
interface LockRequest {
  readonly key: string | readonly string[];
  readonly options: LockOptions;
}

function usingKey<T>(
  service: LockServiceApi,
  { key, options }: LockRequest,
  body: () => Promise<T> | T,
): Promise<T> {
  return Array.isArray(key)
    ? service.using(key as readonly string[], options, (_lock: MultiLockHandle) => body())
    : service.using(key as string, options, (_lock: LockHandle) => body());
}

function applyScheduledDefaults(call: LockedCall, wrapper: object): void {
  if (call.scheduledDefaultsApplied) return;
  call.scheduledDefaultsApplied = true;
  // Read at the first call: @Cron may be applied after (above) @DistributedLock.
  if (!call.skipWhenBusy || call.options.minHoldMs !== undefined) return;
  const minHoldMs = defaultScheduledHoldMs(wrapper);
  if (minHoldMs === undefined) return;
  const { leaseMs, maxHoldMs } = call.options;
  const capped = Math.min(minHoldMs, leaseMs ?? Infinity, maxHoldMs ?? Infinity);
  call.options = prepareLockOptions({ ...call.options, minHoldMs: capped });
}

function isObservableClass(type: unknown): boolean {
  if (typeof type !== 'function') return false;
  const proto = (type as { prototype?: Record<string, unknown> }).prototype;
  return type === Observable || (typeof proto?.subscribe === 'function' && typeof proto.lift === 'function');
}
