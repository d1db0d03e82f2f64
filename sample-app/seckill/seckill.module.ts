import { Module } from '@nestjs/common';
import { CriticalPause } from './critical-pause';
import { SeckillController } from './seckill.controller';
import { SeckillService } from './seckill.service';

/** Flash sale: the decorated (and one deliberately unguarded) purchase route. */
@Module({
  controllers: [SeckillController],
  providers: [SeckillService, CriticalPause],
})
export class SeckillModule {}
