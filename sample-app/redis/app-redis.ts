import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { SAMPLE_CONFIG, type SampleConfig } from '../sample-config';

/**
 * The app's own ioredis connection for its data (stock, inventory). It is a plain client, unrelated
 * to the lock library's connections, as in any service that adds locking to existing code.
 */
@Injectable()
export class AppRedis implements OnApplicationShutdown {
  /** The client; commands queue until it is connected. */
  readonly client: Redis;

  constructor(@Inject(SAMPLE_CONFIG) private readonly config: SampleConfig) {
    this.client = new Redis(config.redisUrl, { maxRetriesPerRequest: 3 });
    // Errors surface on the commands that fail; an unhandled 'error' event would only crash the worker.
    this.client.on('error', () => undefined);
  }

  /** `prefix + name`: every key of the app lives under the configured prefix. */
  key(name: string): string {
    return `${this.config.keyPrefix}${name}`;
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.client.status === 'end') return;
    await this.client.quit().catch(() => undefined);
    this.client.disconnect();
  }
}
