import { Controller, DynamicModule, HttpCode, Module, Param, Post } from '@nestjs/common';
import { Redlock, RedlockModule } from '@anchan828/nest-redlock';
import Redis from 'ioredis';
import { ParseIdPipe } from '../../sample-app/common/parse-id.pipe';
import { SampleCoreModule } from '../../sample-app/sample-core.module';
import type { SampleConfig } from '../../sample-app/sample-config';
import { CriticalPause } from '../../sample-app/seckill/critical-pause';
import { SeckillService } from '../../sample-app/seckill/seckill.service';

/** redlock's default retryDelay; the retry count is sized so the wait budget equals the sample app's. */
const RETRY_DELAY_MS = 200;

/** The sample app's purchase (same SeckillService), locked by @anchan828/nest-redlock's decorator. */
@Controller('seckill')
class Anchan828SeckillController {
  constructor(private readonly seckill: SeckillService) {}

  @Post(':itemId')
  @HttpCode(200)
  @Redlock((_target: unknown, itemId: string) => `bench:http:lock:seckill:${itemId}`)
  buy(@Param('itemId', ParseIdPipe) itemId: string) {
    return this.seckill.purchase(itemId);
  }
}

/** Bench-only app: the seckill route on @anchan828/nest-redlock (its defaults, equal wait budget). */
@Module({})
export class Anchan828SeckillModule {
  static forRoot(config: SampleConfig): DynamicModule {
    return {
      module: Anchan828SeckillModule,
      imports: [
        SampleCoreModule.forRoot(config),
        RedlockModule.register({
          clients: [new Redis(config.redisUrl)],
          settings: { retryCount: Math.ceil(config.lockWaitMs / RETRY_DELAY_MS) },
        }),
      ],
      controllers: [Anchan828SeckillController],
      providers: [SeckillService, CriticalPause],
    };
  }
}
