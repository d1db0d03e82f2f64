import { Body, Controller, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { DistributedLock } from '../../lib';
import { quantityField } from '../common/body-fields';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { ItemStock, SeckillService } from './seckill.service';

/**
 * Flash sale of one item. The locked purchase and the unsafe one run the very same code; only
 * `@DistributedLock` differs. The wait comes from the module's `defaults.waitMs` (LOCK_WAIT_MS):
 * under the demo's 1,000 concurrent buyers requests queue for the item instead of failing, and
 * a request that still waits too long gets 423 Locked with Retry-After from the interceptor.
 */
@Controller('seckill')
export class SeckillController {
  constructor(private readonly seckill: SeckillService) {}

  /** `{ itemId, stock, sold }`. */
  @Get(':itemId')
  stock(@Param('itemId', ParseIdPipe) itemId: string): Promise<ItemStock> {
    return this.seckill.stockOf(itemId);
  }

  /** Puts `{ stock }` units on sale, zeroing `sold`; under the item lock, so no purchase straddles it. */
  @Put(':itemId')
  @DistributedLock({ key: 'seckill:{0}' })
  reset(@Param('itemId', ParseIdPipe) itemId: string, @Body() body: unknown): Promise<ItemStock> {
    return this.seckill.reset(itemId, quantityField(body, 'stock', 0));
  }

  /** Buys one unit under the item's lock: 200, or 409 when sold out. Never oversells. */
  @Post(':itemId')
  @HttpCode(200)
  @DistributedLock({ key: 'seckill:{0}' })
  buy(@Param('itemId', ParseIdPipe) itemId: string): Promise<ItemStock> {
    return this.seckill.purchase(itemId);
  }

  /** The same purchase WITHOUT the lock, to show what the lock prevents: it oversells under load. */
  @Post(':itemId/unsafe')
  @HttpCode(200)
  buyUnsafe(@Param('itemId', ParseIdPipe) itemId: string): Promise<ItemStock> {
    return this.seckill.purchase(itemId);
  }
}
