import { Controller, DynamicModule, HttpCode, Module, Param, Post } from '@nestjs/common';
import Redis from 'ioredis';
import { IoredisAdapter, Redlock, RedlockModule } from 'nestjs-redlock-universal';
import { ParseIdPipe } from '../../sample-app/common/parse-id.pipe';
import { SampleCoreModule } from '../../sample-app/sample-core.module';
import type { SampleConfig } from '../../sample-app/sample-config';
import { CriticalPause } from '../../sample-app/seckill/critical-pause';
import { SeckillService } from '../../sample-app/seckill/seckill.service';

/** redlock-universal's default retryDelay; attempts are sized so the wait budget equals the sample app's. */
const RETRY_DELAY_MS = 100;

/** The sample app's purchase (same SeckillService), locked by nestjs-redlock-universal's decorator. */
@Controller('seckill')
class RedlockUniversalSeckillController {
  constructor(private readonly seckill: SeckillService) {}

  @Post(':itemId')
  @HttpCode(200)
  @Redlock({ key: (itemId: unknown) => `bench:http:lock:seckill:${String(itemId)}` })
  buy(@Param('itemId', ParseIdPipe) itemId: string) {
    return this.seckill.purchase(itemId);
  }
}

/** Bench-only app: the seckill route on nestjs-redlock-universal (single node, its defaults, equal wait budget). */
@Module({})
export class RedlockUniversalSeckillModule {
  static forRoot(config: SampleConfig): DynamicModule {
    return {
      module: RedlockUniversalSeckillModule,
      imports: [
        SampleCoreModule.forRoot(config),
        RedlockModule.forRoot({
          nodes: [new IoredisAdapter(new Redis(config.redisUrl))],
          retryAttempts: Math.ceil(config.lockWaitMs / RETRY_DELAY_MS),
        }),
      ],
      controllers: [RedlockUniversalSeckillController],
      providers: [SeckillService, CriticalPause],
    };
  }
}
