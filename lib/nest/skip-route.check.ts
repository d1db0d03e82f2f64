import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { DISTRIBUTED_LOCK_METADATA } from './distributed-lock.constants';
import { skipOnRouteMessage } from './distributed-lock.messages';
import type { DistributedLockOptions } from './interfaces';

// Nest's route metadata key (PATH_METADATA in @nestjs/common/constants, the same in Nest 11 and 12).
const PATH_METADATA = 'path';

/**
 * Refuses `onBusy: 'skip'` on HTTP route handlers at start-up: a skipped request would answer
 * 2xx with an empty body, which tells the client nothing. Reads metadata only.
 */
@Injectable()
export class SkipRouteCheck implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  /** @internal */
  onModuleInit(): void {
    for (const wrapper of this.discovery.getControllers()) {
      const type = wrapper.metatype as (new (...args: never[]) => unknown) | undefined;
      const prototype = type?.prototype as Record<string, unknown> | undefined;
      if (!prototype) continue;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const method = prototype[name];
        if (typeof method !== 'function') continue;
        const options = Reflect.getMetadata(DISTRIBUTED_LOCK_METADATA, method) as
          DistributedLockOptions | undefined;
        if (options?.onBusy === 'skip' && Reflect.hasMetadata(PATH_METADATA, method)) {
          throw new TypeError(skipOnRouteMessage(`${type!.name}.${name}`));
        }
      }
    }
  }
}
