import { Inject, Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { SAMPLE_CONFIG, type SampleConfig } from '../sample-config';

/**
 * The await between reading and writing the stock: stands for real work (pricing, an order row)
 * and opens the window in which unguarded purchases interleave. Tests replace this provider with
 * a barrier to force that interleaving deterministically.
 */
@Injectable()
export class CriticalPause {
  constructor(@Inject(SAMPLE_CONFIG) private readonly config: SampleConfig) {}

  /** Waits `seckillDelayMs` (0: one timer turn, still a real interleaving point). */
  async wait(_itemId: string): Promise<void> {
    await sleep(this.config.seckillDelayMs);
  }
}
