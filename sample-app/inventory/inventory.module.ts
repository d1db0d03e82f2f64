import { Module } from '@nestjs/common';
import { FencedStore } from './fenced-store';
import { InventoryController } from './inventory.controller';
import { InventoryService } from './inventory.service';

/** Inventory locked by hand, with a fenced store. */
@Module({
  controllers: [InventoryController],
  providers: [InventoryService, FencedStore],
})
export class InventoryModule {}
