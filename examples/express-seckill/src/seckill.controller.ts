import { Body, Controller, Get, Param, ParseIntPipe, Post, Put } from '@nestjs/common';
import { DistributedLock } from 'nestjs-distributed-lock';
import { StockService } from './stock.service';

@Controller('items')
export class SeckillController {
  constructor(private readonly stock: StockService) {}

  @Put(':sku/stock')
  async setStock(@Param('sku') sku: string, @Body('count', ParseIntPipe) count: number) {
    await this.stock.set(sku, count);
    return { sku, count };
  }

  @Get(':sku/stock')
  async getStock(@Param('sku') sku: string) {
    return { sku, count: await this.stock.count(sku) };
  }

  /**
   * One buyer at a time per item, in every replica: the lock `seckill:<sku>` is taken before the
   * method runs and released after it, also when it throws. Buyers queue for up to 10 s (then 423).
   * No leaseMs: the watchdog keeps the lock while the method runs.
   */
  @Post(':sku/buy')
  @DistributedLock({ key: 'seckill:{0}', waitMs: 10_000 })
  async buy(@Param('sku') sku: string) {
    const left = await this.stock.takeOne(sku);
    return { sku, left };
  }
}
