// Past the core's public surface: a decorator's options are checked and prepared once, when the class is
// defined (prepareLockOptions, assertMultiKeyOptions, the option names and message wording of the core).
import { Inject, Optional, UseInterceptors } from '@nestjs/common';
import type { Observable } from 'rxjs';
import {
  assertKnownNames,
  assertMultiKeyOptions,
  describe,
  LOCK_OPTION_NAMES,
  prepareLockOptions,
} from '../../core/internal';
import { LockError } from '../../core';
import { DISTRIBUTED_LOCK_METADATA } from '../distributed-lock.constants';
import {
  methodName,
  moduleMissingMessage,
  NOT_INITIALISED_MESSAGE,
  notAMethodMessage,
} from '../distributed-lock.messages';
import { DistributedLockService } from '../distributed-lock.service';
import type { DistributedLockOptions } from '../interfaces';
import { compileLockKey, LockKeyBuilder } from '../lock-key-template';
import { LOCK_SERVICE_PROPERTY, lockServiceOf, type LockServiceApi } from '../lock-service-binding';
import { ModuleTransportErrorsInterceptor } from '../transports/distributed-lock-transport.interceptor';
import { copyMethodMetadata } from './copy-method-metadata';
import { runLocked, type LockedCall, type LockedMethod } from './locked-call';

/** A method @DistributedLock() may decorate: it returns a Promise or an Observable. */
export type LockableMethod<Args extends unknown[] = any[]> = (
  ...args: [...Args, ...any[]]
) => Promise<unknown> | Observable<unknown>;

/**
 * Runs the method holding a distributed lock whose key comes from its arguments:
 * `@DistributedLock({ key: 'seckill:{0}', waitMs: 2000 })`. The body runs inside the lock's
 * critical section, so nested calls for the same key re-enter and `current()` returns the lock.
 * The method must return a Promise (async) or an Observable (the lock is then held from
 * subscription to complete, error or unsubscribe); anything else, or a key function whose
 * parameters do not match the method's, is a compile error. Works on controller handlers and
 * provider methods (@Cron, @Interval, @OnEvent) in any decorator order, keeping their metadata.
 * Options are checked here, when the class is defined; bad arguments reject before any command.
 */
export function DistributedLock<Args extends unknown[] = any[]>(
  options: DistributedLockOptions<Args>,
): <M extends LockableMethod<Args>>(
  target: object,
  propertyKey: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => TypedPropertyDescriptor<M> {
  return (target, propertyKey, descriptor) => {
    const where = methodName(target, propertyKey);
    if (!descriptor || typeof descriptor.value !== 'function') throw new TypeError(notAMethodMessage(where));
    const original = descriptor.value as unknown as (...args: unknown[]) => unknown;
    const declared = Reflect.getMetadata('design:paramtypes', target, propertyKey) as unknown[] | undefined;
    const call = compileCall(options, where, declared?.length);
    const returnType: unknown = Reflect.getMetadata('design:returntype', target, propertyKey);
    // Injected per instance by Nest from the instance's own module, so each app's instances use
    // that app's service (and a testing module's overrideProvider(DistributedLockService) reaches
    // decorated methods). Optional: LockServiceBinder fails the start-up with a message naming the
    // module when none is visible, instead of Nest's generic one.
    Optional()(target, LOCK_SERVICE_PROPERTY);
    Inject(DistributedLockService)(target, LOCK_SERVICE_PROPERTY);

    const wrapper = new Proxy(original, {
      apply(_method, thisArg: unknown, args: unknown[]) {
        return runLocked(locked, thisArg, args);
      },
    });
    const locked: LockedMethod = { call, method: original, wrapper, returnType, serviceOf };
    copyMethodMetadata(original, wrapper);
    // Nest applies no global interceptor to WebSocket gateways: bound on the method as well, the
    // transport answers reach @SubscribeMessage handlers too. Where the global one runs, it answers
    // first and this one passes (one translation per call); under `transportErrors: false` both stand aside.
    UseInterceptors(ModuleTransportErrorsInterceptor)(target, propertyKey, { value: wrapper });
    // On a plain HTTP route it could only ever pass: taken off again once the class is decorated.
    queueMicrotask(() => unbindOnHttpRoute(target, wrapper));
    Reflect.defineMetadata(DISTRIBUTED_LOCK_METADATA, options, wrapper);
    checkAtBootstrap(target, String(propertyKey));
    descriptor.value = wrapper as unknown as typeof descriptor.value;
    return descriptor;
  };
}

// Nest's metadata keys, by value (@nestjs/common/constants is no public entry point, and
// @nestjs/websockets and @nestjs/microservices are optional peers).
const INTERCEPTORS_METADATA = '__interceptors__';
const PATH_METADATA = 'path';
const METHOD_METADATA = 'method';
const CONTROLLER_WATERMARK = '__controller__';
const GATEWAY_METADATA = 'websockets:is_gateway';
/** Method metadata of the handlers Nest calls in another context than HTTP (WebSockets, microservices). */
const OTHER_HANDLER_KEYS = new Set<unknown>([
  'websockets:message_mapping',
  'message',
  'microservices:pattern',
]);

/**
 * Takes the method's transport interceptor (bound above for gateways) off a plain HTTP route: a
 * method with a route (@Get(), @Post()...) of a @Controller() class that is not a gateway, and that
 * no other transport calls (no @SubscribeMessage, @MessagePattern, @EventPattern or GraphQL
 * metadata). Nest calls such a method in HTTP contexts only, where that interceptor lets every call
 * pass: it only cost each request a layer of Nest's interceptor chain (an AsyncResource.bind, an
 * rxjs defer and a mergeAll). Run once the class is fully decorated (a microtask after the method
 * decorator: the other method decorators and the class decorators run in the same synchronous class
 * definition), long before Nest reads the interceptors at start-up. Anything it cannot tell keeps the
 * interceptor, as before.
 */
function unbindOnHttpRoute(target: object, wrapper: object): void {
  const owner: unknown = (target as { constructor?: unknown }).constructor;
  if (typeof owner !== 'function' || owner.prototype !== target) return; // a static method
  if (!Reflect.getMetadata(CONTROLLER_WATERMARK, owner) || Reflect.getMetadata(GATEWAY_METADATA, owner))
    return;
  if (Reflect.getMetadata(PATH_METADATA, wrapper) === undefined) return;
  if (Reflect.getMetadata(METHOD_METADATA, wrapper) === undefined) return;
  for (const key of Reflect.getMetadataKeys(wrapper) as unknown[]) {
    if (OTHER_HANDLER_KEYS.has(key) || (typeof key === 'string' && key.startsWith('graphql:'))) return;
  }
  const bound = Reflect.getMetadata(INTERCEPTORS_METADATA, wrapper) as unknown[] | undefined;
  const at = bound ? bound.lastIndexOf(ModuleTransportErrorsInterceptor) : -1;
  if (at < 0) return;
  Reflect.defineMetadata(
    INTERCEPTORS_METADATA,
    bound!.filter((_, i) => i !== at),
    wrapper,
  );
}

/** Decorated method names per prototype whose onApplicationBootstrap checks for a lock service. */
const checkedMethods = new WeakMap<object, string[]>();

/**
 * The start-up check for an app that never imports DistributedLockModule (issue 25): then nothing of
 * this library is in the app (LockServiceBinder, which names a module that sees no service, is a
 * provider of that module), so the check rides on the decorated class itself. At decoration time the
 * prototype's onApplicationBootstrap (the class's own or inherited one, kept and called after) is
 * wrapped: Nest calls it on every instance it built, controllers and providers alike, after every
 * onModuleInit (so after LockServiceBinder bound useFactory / useValue instances and after Nest
 * injected the service into class providers). An instance with no lock service by then can never
 * lock, and app.init() fails naming class and methods, instead of the first call failing at 3 a.m.
 * Per instance, so two apps in one process are checked apart; a class never instantiated by Nest
 * (or built with `new`) is never checked; request-scoped and transient instances get no hook.
 */
function checkAtBootstrap(target: object, method: string): void {
  const methods = checkedMethods.get(target);
  if (methods) {
    methods.push(method);
    return;
  }
  const names = [method];
  checkedMethods.set(target, names);
  const own = target as { onApplicationBootstrap?: (...args: unknown[]) => unknown };
  const previous = own.onApplicationBootstrap;
  Object.defineProperty(target, 'onApplicationBootstrap', {
    configurable: true,
    writable: true,
    enumerable: false,
    value: function onApplicationBootstrap(this: object, ...args: unknown[]): unknown {
      if (!lockServiceOf(this)) throw new Error(moduleMissingMessage(this.constructor.name, names));
      return previous?.apply(this, args);
    },
  });
}

function serviceOf(thisArg: unknown): LockServiceApi {
  const service = lockServiceOf(thisArg);
  if (!service) throw new LockError(NOT_INITIALISED_MESSAGE);
  return service;
}

function compileCall(options: unknown, where: string, declaredParams: number | undefined): LockedCall {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(
      `@DistributedLock() on ${where} needs an options object with a "key", got ${describe(options)}`,
    );
  }
  const what = `@DistributedLock() options on ${where}`;
  assertKnownNames(options as Record<string, unknown>, ['key', 'onBusy', ...LOCK_OPTION_NAMES], what);
  const { key, onBusy, ...lockOptions } = options as DistributedLockOptions;
  if (onBusy !== undefined && onBusy !== 'throw' && onBusy !== 'skip') {
    throw new TypeError(
      `@DistributedLock() on ${where}: onBusy must be 'throw' or 'skip', got ${describe(onBusy)}`,
    );
  }
  // onBusy: 'skip' makes one attempt unless waitMs says otherwise (tryAcquire's default).
  const skip = onBusy === 'skip';
  const prepared = prepareLockOptions(
    skip && lockOptions.waitMs === undefined ? { ...lockOptions, waitMs: 0 } : lockOptions,
    what,
  );
  const buildKey: LockKeyBuilder = compileLockKey(key, where, declaredParams);
  if (Array.isArray(key)) {
    try {
      assertMultiKeyOptions(prepared);
    } catch (error) {
      throw new TypeError(`@DistributedLock() on ${where}: ${(error as Error).message}`);
    }
  }
  return { where, buildKey, skipWhenBusy: skip, options: prepared };
}
