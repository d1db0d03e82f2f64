import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { DISTRIBUTED_LOCK_METADATA } from './distributed-lock.constants';
import {
  skipOnMessageHandlerMessage,
  skipOnResolverMessage,
  skipOnRouteMessage,
} from './distributed-lock.messages';
import type { DistributedLockOptions } from './interfaces';

// Metadata keys of the handlers whose caller waits for an answer, as strings so that this package
// depends on none of their packages (the same in Nest 11 and 12).
/** Nest's route path (PATH_METADATA, @nestjs/common). */
const PATH_METADATA = 'path';
/** @MessagePattern / @EventPattern (PATTERN_HANDLER_METADATA, @nestjs/microservices): 1 = message, 2 = event. */
const PATTERN_HANDLER_METADATA = 'microservices:handler_type';
const MESSAGE_HANDLER = 1;
/** @Query / @Mutation / @Subscription (RESOLVER_TYPE_METADATA, @nestjs/graphql). */
const RESOLVER_TYPE_METADATA = 'graphql:resolver_type';
/** @ResolveField (RESOLVER_PROPERTY_METADATA, @nestjs/graphql). */
const RESOLVER_PROPERTY_METADATA = 'graphql:resolve_property';

/**
 * Refuses `onBusy: 'skip'` at start-up wherever a caller waits for an answer: an HTTP route (a
 * skipped request would answer 2xx with an empty body), a GraphQL resolver (null without an error)
 * or a microservice message handler (an empty reply). Event handlers, cron jobs and WebSocket
 * messages may skip. Reads metadata only.
 */
@Injectable()
export class SkipRouteCheck implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  /** @internal */
  onModuleInit(): void {
    const controllers = new Set(this.discovery.getControllers());
    for (const wrapper of [...controllers, ...this.discovery.getProviders()]) {
      const type = wrapper.metatype as (new (...args: never[]) => unknown) | undefined;
      const prototype = (wrapper.inject ? undefined : type?.prototype) as Record<string, unknown> | undefined;
      if (!prototype) continue;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const method = prototype[name];
        if (typeof method !== 'function') continue;
        const options = Reflect.getMetadata(DISTRIBUTED_LOCK_METADATA, method) as
          DistributedLockOptions | undefined;
        if (options?.onBusy !== 'skip') continue;
        const where = `${type!.name}.${name}`;
        if (controllers.has(wrapper) && Reflect.hasMetadata(PATH_METADATA, method)) {
          throw new TypeError(skipOnRouteMessage(where));
        }
        if (Reflect.getMetadata(PATTERN_HANDLER_METADATA, method) === MESSAGE_HANDLER) {
          throw new TypeError(skipOnMessageHandlerMessage(where));
        }
        if (
          Reflect.hasMetadata(RESOLVER_TYPE_METADATA, method) ||
          Reflect.getMetadata(RESOLVER_PROPERTY_METADATA, method) === true
        ) {
          throw new TypeError(skipOnResolverMessage(where));
        }
      }
    }
  }
}
