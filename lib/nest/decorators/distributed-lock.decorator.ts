import { UseInterceptors } from '@nestjs/common';
import { LockError } from '../../core/errors';
import { LOCK_OPTION_NAMES, LockOptions } from '../../core/lock-options';
import { assertKnownNames, describe, validateLockOptions } from '../../core/validation';
import { DISTRIBUTED_LOCK_METADATA } from '../distributed-lock.constants';
import { DistributedLockInterceptor } from '../distributed-lock.interceptor';
import { methodName, NOT_INITIALISED_MESSAGE, notAMethodMessage } from '../distributed-lock.messages';
import type { DistributedLockOptions } from '../interfaces';
import { compileLockKey } from '../lock-key-template';
import { lockServiceRegistry } from '../lock-service-registry';
import { copyMethodMetadata } from './copy-method-metadata';

/**
 * Runs the method holding a distributed lock whose key comes from its arguments:
 * `@DistributedLock({ key: 'seckill:{0}', waitMs: 2000 })`. The method's body runs inside the
 * lock's critical section, so nested calls for the same key re-enter and
 * `DistributedLockService.current()` returns the lock there. The decorated method always returns
 * a promise. Works on controller handlers and on provider methods (@Cron, @Interval, @OnEvent) in
 * any decorator order: other decorators' metadata is kept. Options are checked here, when the class
 * is defined; bad arguments at call time reject before any Redis command.
 */
export function DistributedLock(options: DistributedLockOptions): MethodDecorator {
  return (target: object, propertyKey: string | symbol, descriptor?: PropertyDescriptor) => {
    const where = methodName(target, propertyKey);
    if (!descriptor || typeof descriptor.value !== 'function') throw new TypeError(notAMethodMessage(where));
    const spec = compileSpec(options, where);
    const original = descriptor.value as (...args: unknown[]) => unknown;

    const wrapper = async function (this: unknown, ...args: unknown[]): Promise<unknown> {
      const service = lockServiceRegistry.resolve(this);
      if (!service) throw new LockError(NOT_INITIALISED_MESSAGE);
      const key = spec.key(this, args);
      const handle = spec.skipWhenBusy
        ? await service.tryAcquire(key, spec.lockOptions)
        : await service.acquire(key, spec.lockOptions);
      if (!handle) return undefined;
      try {
        return await service.runInLock(handle, () => original.apply(this, args));
      } finally {
        await handle.release();
      }
    };
    Object.defineProperty(wrapper, 'name', { value: original.name, configurable: true });
    copyMethodMetadata(original, wrapper);
    Reflect.defineMetadata(DISTRIBUTED_LOCK_METADATA, options, wrapper);
    descriptor.value = wrapper;
    // Busy → 423 and Redis down → 503 on HTTP routes; a no-op for provider methods.
    UseInterceptors(DistributedLockInterceptor)(target, propertyKey, descriptor);
    return descriptor;
  };
}

interface LockSpec {
  key: ReturnType<typeof compileLockKey>;
  skipWhenBusy: boolean;
  lockOptions: LockOptions;
}

function compileSpec(options: DistributedLockOptions, where: string): LockSpec {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(
      `@DistributedLock() on ${where} needs an options object with a "key", got ${describe(options)}`,
    );
  }
  const what = `@DistributedLock() options on ${where}`;
  assertKnownNames(
    options as unknown as Record<string, unknown>,
    ['key', 'onBusy', ...LOCK_OPTION_NAMES],
    what,
  );
  const { key, onBusy, ...lockOptions } = options;
  if (onBusy !== undefined && onBusy !== 'throw' && onBusy !== 'skip') {
    throw new TypeError(
      `@DistributedLock() on ${where}: onBusy must be 'throw' or 'skip', got ${describe(onBusy)}`,
    );
  }
  validateLockOptions(lockOptions, what);
  return { key: compileLockKey(key, where), skipWhenBusy: onBusy === 'skip', lockOptions };
}
