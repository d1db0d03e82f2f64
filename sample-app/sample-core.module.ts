import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppRedis } from './redis/app-redis';
import { LockClient } from './redis/lock-client';
import { SAMPLE_CONFIG, type SampleConfig } from './sample-config';

/** The settings and the app's own Redis client, available to every feature module. */
@Global()
@Module({})
export class SampleCoreModule {
  /** Provides SAMPLE_CONFIG (`config`), AppRedis and LockClient (the lock module's `redis`). */
  static forRoot(config: SampleConfig): DynamicModule {
    return {
      module: SampleCoreModule,
      providers: [{ provide: SAMPLE_CONFIG, useValue: config }, AppRedis, LockClient],
      exports: [SAMPLE_CONFIG, AppRedis, LockClient],
    };
  }
}
