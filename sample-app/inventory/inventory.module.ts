import { Module } from '@nestjs/common';
import { DistributedLockService } from '../../lib';
import { SAMPLE_CONFIG, type SampleConfig } from '../sample-config';
import { FencedStore } from './fenced-store';
import { InventoryController } from './inventory.controller';
import { InventoryService } from './inventory.service';
import { InventoryStore } from './inventory-store';
import { PostgresInventoryStore } from './postgres-inventory-store';
import { RedisInventoryStore } from './redis-inventory-store';

/**
 * Inventory locked by hand, with a fenced store: PostgreSQL through the fencing SQL helper when
 * DATABASE_URL is set, else the app's Redis (the default, so the app needs nothing but Redis).
 */
@Module({
  controllers: [InventoryController],
  providers: [
    InventoryService,
    FencedStore,
    {
      provide: InventoryStore,
      inject: [SAMPLE_CONFIG, DistributedLockService, FencedStore],
      useFactory: (config: SampleConfig, locks: DistributedLockService, redisStore: FencedStore) =>
        config.databaseUrl
          ? PostgresInventoryStore.connect(config.databaseUrl, locks)
          : new RedisInventoryStore(redisStore, locks),
    },
  ],
})
export class InventoryModule {}
