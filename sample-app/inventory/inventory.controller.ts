import { Body, Controller, Get, HttpCode, Param, Post, UseFilters, UseInterceptors } from '@nestjs/common';
import { DistributedLockInterceptor } from '../../lib';
import { quantityField, stringField } from '../common/body-fields';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { FencedRecord } from './fenced-store';
import { StaleFenceFilter } from './inventory-errors';
import { InventoryService, TransferResult } from './inventory.service';

/**
 * Inventory per SKU; the locking happens by hand in InventoryService. No decorator adds the lock
 * interceptor here, so it is applied explicitly: busy → 423 with Retry-After, Redis down → 503.
 */
@Controller('inventory')
@UseInterceptors(DistributedLockInterceptor)
@UseFilters(StaleFenceFilter)
export class InventoryController {
  private readonly skuPipe = new ParseIdPipe();

  constructor(private readonly inventory: InventoryService) {}

  /** Moves `{ qty }` units `{ from }` one SKU `{ to }` another: 200, or 409 when the source is short. */
  @Post('transfer')
  @HttpCode(200)
  transfer(@Body() body: unknown): Promise<TransferResult> {
    const from = this.skuPipe.transform(stringField(body, 'from'));
    const to = this.skuPipe.transform(stringField(body, 'to'));
    return this.inventory.transfer(from, to, quantityField(body, 'qty', 1));
  }

  /** `{ sku, qty, fence }`: fence is the fencing token of the lock holder that wrote last. */
  @Get(':sku')
  get(@Param('sku', ParseIdPipe) sku: string): Promise<FencedRecord> {
    return this.inventory.get(sku);
  }

  /** Adds `{ qty }` units to the SKU. */
  @Post(':sku/restock')
  @HttpCode(200)
  restock(@Param('sku', ParseIdPipe) sku: string, @Body() body: unknown): Promise<FencedRecord> {
    return this.inventory.restock(sku, quantityField(body, 'qty', 1));
  }
}
