import { Inject, Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import { DISTRIBUTED_LOCK_METADATA } from './distributed-lock.constants';
import { serviceNotVisibleMessage } from './distributed-lock.messages';
import { DistributedLockService } from './distributed-lock.service';
import { bindLockService, lockServiceOf, type LockServiceApi } from './lock-service-binding';

type Wrapper = ReturnType<DiscoveryService['getProviders']>[number];
type HostModule = NonNullable<Wrapper['host']>;

/** Resolves DistributedLockService the way Nest would for a class declared in a given module. */
@Injectable()
class LockServiceProbe {
  constructor(@Optional() @Inject(DistributedLockService) readonly service?: DistributedLockService) {}
}

// Every lock module of an app runs this; a provider is checked once.
const checked = new WeakSet<object>();

/**
 * Gives every provider and controller with @DistributedLock() methods the lock service of its own
 * module, at start-up: the one Nest injects (class providers), or, for useFactory / useValue
 * instances, the one visible from the module that declares them. When the module sees none, the
 * start-up fails naming that module: a guess (another module's or another app's service) would
 * lock on the wrong Redis without a word.
 */
@Injectable()
export class LockServiceBinder implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  /** @internal */
  async onModuleInit(): Promise<void> {
    const visible = new Map<HostModule, Promise<LockServiceApi | undefined>>();
    for (const wrapper of [...this.discovery.getControllers(), ...this.discovery.getProviders()]) {
      if (checked.has(wrapper) || !wrapper.host) continue;
      const methods = this.decoratedMethods(wrapper);
      if (methods.length === 0) continue;
      const host = wrapper.host;
      if (!visible.has(host)) visible.set(host, serviceVisibleFrom(host));
      const service = await visible.get(host);
      const className = classNameOf(wrapper);
      if (!service) throw new Error(serviceNotVisibleMessage(className, methods, host.name));
      checked.add(wrapper);
      const instance: unknown = wrapper.instance;
      if (typeof instance === 'object' && instance !== null && !lockServiceOf(instance)) {
        bindLockService(instance, service);
      }
    }
  }

  private decoratedMethods(wrapper: Wrapper): string[] {
    const prototype = prototypeOf(wrapper);
    if (!prototype) return [];
    return this.scanner.getAllMethodNames(prototype).filter((name) => {
      const method = prototype[name];
      return typeof method === 'function' && Reflect.hasMetadata(DISTRIBUTED_LOCK_METADATA, method);
    });
  }
}

async function serviceVisibleFrom(host: HostModule): Promise<LockServiceApi | undefined> {
  const moduleRef = host.providers.get(ModuleRef)?.instance as ModuleRef | undefined;
  if (!moduleRef) return undefined;
  const probe = await moduleRef.create(LockServiceProbe);
  return probe.service;
}

function prototypeOf(wrapper: Wrapper): Record<string, unknown> | undefined {
  const instance: unknown = wrapper.instance;
  // useFactory / useValue: the instance's own class; a class provider: its metatype.
  if (!wrapper.metatype || wrapper.inject) {
    return typeof instance === 'object' && instance !== null
      ? (Object.getPrototypeOf(instance) as Record<string, unknown>)
      : undefined;
  }
  return (wrapper.metatype as { prototype?: Record<string, unknown> }).prototype;
}

function classNameOf(wrapper: Wrapper): string {
  const instance: unknown = wrapper.instance;
  const ctor = (typeof instance === 'object' && instance !== null ? instance.constructor : undefined) as
    { name?: string } | undefined;
  return (wrapper.metatype && !wrapper.inject ? wrapper.metatype.name : ctor?.name) || String(wrapper.name);
}
