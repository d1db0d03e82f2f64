import { Controller, DynamicModule, HttpCode, Module, Param, Post } from '@nestjs/common';
import { DistributedLock, DistributedLockModule } from '../../lib';
import { ParseIdPipe } from '../../sample-app/common/parse-id.pipe';
import { SampleCoreModule } from '../../sample-app/sample-core.module';
import type { SampleConfig } from '../../sample-app/sample-config';
import { CriticalPause } from '../../sample-app/seckill/critical-pause';
import { SeckillService } from '../../sample-app/seckill/seckill.service';

/**
 * The seckill route and service under `@DistributedLock`, in a module as bare as the ceiling's and the
 * peers' (no console, guard, metrics or health of the sample app): the lock's own cost per request.
 */
@Controller('seckill')
class BareSeckillController {
  constructor(private readonly seckill: SeckillService) {}

  @Post(':itemId')
  @HttpCode(200)
  @DistributedLock({ key: 'seckill:{0}' })
  buy(@Param('itemId', ParseIdPipe) itemId: string) {
    return this.seckill.purchase(itemId);
  }
}

/** Bench-only app: this library on the seckill route, nothing else of the sample app. */
@Module({})
export class BareSeckillModule {
  static forRoot(config: SampleConfig): DynamicModule {
    return {
      module: BareSeckillModule,
      imports: [
        SampleCoreModule.forRoot(config),
        DistributedLockModule.forRoot({
          redis: config.redisUrl,
          keyPrefix: `${config.keyPrefix}lock:`,
          defaults: { waitMs: config.lockWaitMs },
        }),
      ],
      controllers: [BareSeckillController],
      providers: [SeckillService, CriticalPause],
    };
  }
}
