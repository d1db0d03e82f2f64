import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { DistributedLockModuleOptions } from '../../lib';

/** What the module's `redis` option takes: a URL, ioredis options, or a client of any supported family. */
type RedisConnectionOption = NonNullable<DistributedLockModuleOptions['redis']>;
import { SAMPLE_CONFIG, type SampleConfig } from '../sample-config';

/**
 * What the lock module's `redis` option gets: the URL (ioredis, the default), or a client the app
 * makes itself (`REDIS_CLIENT=node-redis` or `glide`) as a team that already has one would pass it.
 * The library never closes a client it is given, so the app closes it at shutdown (after the lock
 * module's own shutdown, which releases what is held).
 */
@Injectable()
export class LockClient implements OnApplicationShutdown {
  private client?: { close(): unknown };

  constructor(@Inject(SAMPLE_CONFIG) private readonly config: SampleConfig) {}

  /** The `redis` option for DistributedLockModule. */
  async option(): Promise<RedisConnectionOption> {
    const { redisClient, redisUrl } = this.config;
    if (redisClient === 'node-redis') {
      const { createClient } = await import('redis');
      const client = createClient({ url: redisUrl });
      client.on('error', () => undefined); // the lock module reports connection trouble
      this.client = client;
      return client; // connected by the library on first use
    }
    if (redisClient === 'glide') {
      const { GlideClient } = await import('@valkey/valkey-glide');
      const { hostname, port } = new URL(redisUrl);
      const client = await GlideClient.createClient({
        addresses: [{ host: hostname, port: Number(port || 6379) }],
        requestTimeout: 5000,
      });
      this.client = client;
      return client;
    }
    return redisUrl;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.resolve(this.client?.close()).catch(() => undefined);
  }
}
