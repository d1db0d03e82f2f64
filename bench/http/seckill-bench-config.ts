import type { SampleConfig } from '../../sample-app/sample-config';

/** The three apps driven side by side: the sample app itself, and the same route on two peers. */
export const HTTP_APPS = [
  'nestjs-distributed-lock',
  '@anchan828/nest-redlock',
  'nestjs-redlock-universal',
] as const;

/** One of HTTP_APPS. */
export type HttpAppId = (typeof HTTP_APPS)[number];

/** The item every request buys (one key: all requests contend). */
export const ITEM_ID = 'item1';

/**
 * Settings shared by the three apps: the sample app's own defaults (1 ms pause inside the
 * critical section, 60 s lock wait) so the peers get the same wait budget as our module.
 */
export function benchSampleConfig(redisUrl: string, port: number): SampleConfig {
  return { port, redisUrl, keyPrefix: 'bench:http:', seckillDelayMs: 1, lockWaitMs: 60_000 };
}
