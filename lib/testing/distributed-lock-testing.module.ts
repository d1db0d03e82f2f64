import { DynamicModule, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import type { LockEngineOptions } from '../core/lock-options';
import { LOCK_ENGINE_OVERRIDE } from '../nest/distributed-lock.constants';
import { DistributedLockExplorer } from '../nest/distributed-lock.explorer';
import { DISTRIBUTED_LOCK_MODULE_OPTIONS } from '../nest/distributed-lock.module-definition';
import { DistributedLockService } from '../nest/distributed-lock.service';
import type { RetryAfterOption } from '../nest/interfaces';
import { createInMemoryLockEngine } from './create-in-memory-lock-engine';
import { LockTestingControls } from './lock-testing-controls';

/** Options of DistributedLockTestingModule.forRoot(): those of DistributedLockModule, without a connection. */
export interface DistributedLockTestingModuleOptions extends LockEngineOptions {
  /** HTTP status of a "busy" answer. Default 423 (Locked), as in DistributedLockModule. */
  busyStatus?: number;
  /** The `Retry-After` header of a "busy" answer. Default `true`, as in DistributedLockModule. */
  retryAfter?: RetryAfterOption;
  /** Provide DistributedLockService and the controls everywhere. Default false. */
  isGlobal?: boolean;
}

/**
 * The fault controls of the testing module's in-memory engine, injectable in a Nest test
 * (`moduleRef.get(DistributedLockTestingControls)`): the LockTestingControls class under its Nest name.
 */
export const DistributedLockTestingControls = LockTestingControls;
/** The fault controls of the testing module's in-memory engine. */
export type DistributedLockTestingControls = LockTestingControls;

/** Closes the in-memory engine at shutdown (idempotent: the service usually closed it already). */
@Injectable()
class InMemoryEngineCloser implements OnApplicationShutdown {
  constructor(private readonly controls: LockTestingControls) {}

  async onApplicationShutdown(): Promise<void> {
    await this.controls.engine.close();
  }
}

/**
 * Stands in for DistributedLockModule.forRoot() in tests: the same DistributedLockService,
 * @DistributedLock() and HTTP mapping (busy → 423, backend failure → 503), on the real lock engine
 * over an in-memory backend. Single process, no Redis: for tests only.
 *
 * Its only tie to the Nest layer is "give DistributedLockService a pre-built engine"
 * (LOCK_ENGINE_OVERRIDE today; the LOCK_ENGINE provider token after the Nest-layer rewrite).
 */
@Module({})
export class DistributedLockTestingModule {
  /** A module with DistributedLockService and DistributedLockTestingControls on one in-memory engine. */
  static forRoot(options: DistributedLockTestingModuleOptions = {}): DynamicModule {
    const { isGlobal = false, busyStatus, retryAfter, ...engineOptions } = options;
    const httpOptions = {
      ...engineOptions,
      ...(busyStatus !== undefined && { busyStatus }),
      ...(retryAfter !== undefined && { retryAfter }),
    };
    return {
      module: DistributedLockTestingModule,
      global: isGlobal,
      imports: [DiscoveryModule],
      providers: [
        // Read by DistributedLockService (HTTP settings, option validation); not exported, so the
        // route interceptor takes its settings from the active service.
        { provide: DISTRIBUTED_LOCK_MODULE_OPTIONS, useValue: httpOptions },
        {
          provide: LockTestingControls,
          useFactory: () => LockTestingControls.of(createInMemoryLockEngine(engineOptions)),
        },
        {
          provide: LOCK_ENGINE_OVERRIDE,
          useFactory: (controls: LockTestingControls) => controls.engine,
          inject: [LockTestingControls],
        },
        DistributedLockService,
        DistributedLockExplorer,
        InMemoryEngineCloser,
      ],
      exports: [DistributedLockService, LockTestingControls],
    };
  }
}
