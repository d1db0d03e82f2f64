import { DynamicModule, Module } from '@nestjs/common';
import { DistributedLockModule } from '../lib';
import { InventoryModule } from './inventory/inventory.module';
import { ObservabilityModule } from './observability/observability.module';
import { SampleCoreModule } from './sample-core.module';
import { configFromEnv, SAMPLE_CONFIG, type SampleConfig } from './sample-config';
import { SeckillModule } from './seckill/seckill.module';
import { LockClient } from './redis/lock-client';
import { OperationsModule } from './operations/operations.module';

/** Root module of the sample app. */
@Module({})
export class AppModule {
  /** The app for `config` (default: read from the environment; see sample-config.ts). */
  static forRoot(config: SampleConfig = configFromEnv()): DynamicModule {
    return {
      module: AppModule,
      imports: [
        SampleCoreModule.forRoot(config),
        // The async variant, as an app that reads its settings from a config provider would write it.
        DistributedLockModule.forRootAsync({
          isGlobal: true,
          inject: [SAMPLE_CONFIG, LockClient],
          // REDIS_CLIENT=node-redis|glide: the locks run on a client the app made (see lock-client.ts).
          useFactory: async (cfg: SampleConfig, client: LockClient) => ({
            redis: await client.option(),
            keyPrefix: `${cfg.keyPrefix}lock:`,
            ...(cfg.lockWatchdogMs !== undefined && { watchdogLeaseMs: cfg.lockWatchdogMs }),
            defaults: {
              waitMs: cfg.lockWaitMs,
              ...(cfg.lockLeaseMs !== undefined && { leaseMs: cfg.lockLeaseMs }),
            },
          }),
        }),
        SeckillModule,
        InventoryModule,
        ObservabilityModule,
        // The lock console at /locks, behind a global guard (operations/operator.guard.ts).
        OperationsModule.forRoot(),
      ],
    };
  }
}
