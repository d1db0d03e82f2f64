import { isObservable, lastValueFrom, Observable } from 'rxjs';
import {
  LockNotAcquiredError,
  prepareLockOptions,
  type LockHandle,
  type LockOptions,
  type MultiLockHandle,
  withLockSignal,
} from '../../core';
import type { LockKeyBuilder } from '../lock-key-template';
import type { RegisteredLockService } from '../lock-service-registry';
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

/**
 * One call of a decorated method: an Observable when the method is declared to return one (the
 * lock is held from subscription to complete, error or unsubscribe), a Promise otherwise.
 */
export function runLocked(
  serviceOf: () => RegisteredLockService,
  call: LockedCall,
  wrapper: object,
  method: (...args: unknown[]) => unknown,
  thisArg: unknown,
  args: unknown[],
  returnType: unknown,
): unknown {
  applyScheduledDefaults(call, wrapper);
  if (isObservableClass(returnType)) return lockedObservable(serviceOf, call, method, thisArg, args);
  return lockedPromise(serviceOf, call, method, thisArg, args);
}

async function lockedPromise(
  serviceOf: () => RegisteredLockService,
  call: LockedCall,
  method: (...args: unknown[]) => unknown,
  thisArg: unknown,
  args: unknown[],
): Promise<unknown> {
  const service = serviceOf();
  const key = call.buildKey(thisArg, args);
  const handle = await take(service, call, key, call.options);
  if (!handle) return undefined;
  return service.hold(handle, () => {
    const result = method.apply(thisArg, args);
    // An Observable from a method not declared to return one: hold the lock until it completes.
    return isObservable(result) ? lastValueFrom(result, { defaultValue: undefined }) : result;
  });
}

function lockedObservable(
  serviceOf: () => RegisteredLockService,
  call: LockedCall,
  method: (...args: unknown[]) => unknown,
  thisArg: unknown,
  args: unknown[],
): Observable<unknown> {
  return new Observable<unknown>((subscriber) => {
    const unsubscribed = new AbortController();
    let handle: LockHandle | MultiLockHandle | null | undefined;
    let released: Promise<unknown> | undefined;
    const release = () => (released ??= handle ? handle.release() : Promise.resolve());
    let inner: { unsubscribe(): void } | undefined;
    const start = async () => {
      const service = serviceOf();
      const key = call.buildKey(thisArg, args);
      const signal = call.options.signal
        ? AbortSignal.any([call.options.signal, unsubscribed.signal])
        : unsubscribed.signal;
      handle = await take(service, call, key, withLockSignal(call.options, signal));
      if (!handle) return subscriber.complete();
      if (unsubscribed.signal.aborted) return void release();
      const h = handle;
      const source = service.runInLock(h, () => method.apply(thisArg, args));
      if (!isObservable(source))
        throw new TypeError(
          `${call.where} is declared to return an Observable but returned ${typeof source}`,
        );
      inner = service.runInLock(h, () =>
        source.subscribe({
          next: (value) => subscriber.next(value),
          error: (error: unknown) => void release().finally(() => subscriber.error(error)),
          complete: () => void release().finally(() => subscriber.complete()),
        }),
      );
    };
    start().catch((error: unknown) => {
      void release();
      if (!unsubscribed.signal.aborted) subscriber.error(error);
    });
    return () => {
      unsubscribed.abort();
      inner?.unsubscribe();
      void release();
    };
  });
}

/** acquire, or tryAcquire with `onBusy: 'skip'` (null when busy). */
function take(
  service: RegisteredLockService,
  call: LockedCall,
  key: string | readonly string[],
  options: LockOptions,
): Promise<LockHandle | MultiLockHandle | null> {
  if (!call.skipWhenBusy) return service.acquire(key, options);
  return service.tryAcquire(key, options).catch((error: unknown) => {
    if (error instanceof LockNotAcquiredError) return null;
    throw error;
  });
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
