import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { DISTRIBUTED_LOCK_METADATA } from './distributed-lock.constants';
import { DistributedLockService } from './distributed-lock.service';
import { lockServiceRegistry } from './lock-service-registry';

/**
 * Finds the providers and controllers of this app whose methods carry @DistributedLock() and binds
 * them to this app's lock service, so their calls use it even when several apps share a process.
 * It only reads metadata; instances are never modified.
 */
@Injectable()
export class DistributedLockExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly service: DistributedLockService,
  ) {}

  /** @internal */
  onModuleInit(): void {
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance: unknown = wrapper.instance;
      // Request-scoped and transient instances are created later; their calls use the fallback.
      if (typeof instance !== 'object' || instance === null || !wrapper.isDependencyTreeStatic()) continue;
      const prototype = Object.getPrototypeOf(instance);
      if (!prototype) continue;
      const decorated = this.scanner.getAllMethodNames(prototype).some((name) => {
        const method = (instance as Record<string, unknown>)[name];
        return typeof method === 'function' && Reflect.hasMetadata(DISTRIBUTED_LOCK_METADATA, method);
      });
      if (decorated) lockServiceRegistry.bind(instance, this.service);
    }
  }
}
