import { Body, Controller, Get, NotFoundException, Param, ParseIntPipe, Post, Put } from '@nestjs/common';
import { StockService } from './stock.service';

@Controller('stock')
export class StockController {
  constructor(private readonly stock: StockService) {}

  @Put(':sku')
  async set(@Param('sku') sku: string, @Body('qty', ParseIntPipe) qty: number) {
    await this.stock.set(sku, qty);
    return { sku, qty };
  }

  @Get(':sku')
  async get(@Param('sku') sku: string) {
    const qty = await this.stock.quantity(sku);
    if (qty === undefined) throw new NotFoundException();
    return { sku, qty };
  }

  @Post(':sku/take')
  async take(@Param('sku') sku: string, @Body('n', ParseIntPipe) n: number) {
    return { sku, left: await this.stock.take(sku, n) };
  }
}
