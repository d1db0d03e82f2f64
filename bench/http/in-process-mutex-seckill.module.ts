import { Controller, DynamicModule, HttpCode, Injectable, Module, Param, Post } from '@nestjs/common';
import { ParseIdPipe } from '../../sample-app/common/parse-id.pipe';
import { SampleCoreModule } from '../../sample-app/sample-core.module';
import type { SampleConfig } from '../../sample-app/sample-config';
import { CriticalPause } from '../../sample-app/seckill/critical-pause';
import { SeckillService } from '../../sample-app/seckill/seckill.service';

/**
 * A promise-chain mutex per key, inside this process only: each critical section starts when the
 * previous one on the same key has settled, with no Redis command and no hand-off cost. Correct in
 * ONE process only; it is the ceiling a distributed lock on one key can approach, not a lock.
 */
@Injectable()
export class KeyedInProcessMutex {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `fn` once every earlier call on `key` has settled; returns (or throws) what `fn` does. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

/** The sample app's purchase (same SeckillService), serialized by the in-process mutex instead of a lock. */
@Controller('seckill')
class InProcessMutexSeckillController {
  constructor(
    private readonly seckill: SeckillService,
    private readonly mutex: KeyedInProcessMutex,
  ) {}

  @Post(':itemId')
  @HttpCode(200)
  buy(@Param('itemId', ParseIdPipe) itemId: string) {
    return this.mutex.run(`seckill:${itemId}`, () => this.seckill.purchase(itemId));
  }
}

/** Bench-only app: the seckill route in ONE process behind an in-process mutex: the HTTP ceiling. */
@Module({})
export class InProcessMutexSeckillModule {
  static forRoot(config: SampleConfig): DynamicModule {
    return {
      module: InProcessMutexSeckillModule,
      imports: [SampleCoreModule.forRoot(config)],
      controllers: [InProcessMutexSeckillController],
      providers: [SeckillService, CriticalPause, KeyedInProcessMutex],
    };
  }
}
