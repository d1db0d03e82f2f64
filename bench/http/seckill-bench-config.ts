import type { SampleConfig } from '../../sample-app/sample-config';

/**
 * The apps driven side by side: the sample app itself, the ceiling (the same route and service in
 * one process behind an in-process mutex, no Redis lock), and the same route on two peers.
 */
export const HTTP_APPS = [
  'nestjs-distributed-lock',
  'nestjs-distributed-lock (leaseMs 5 s)',
  'nestjs-distributed-lock (bare module)',
  'in-process mutex (ceiling)',
  '@anchan828/nest-redlock',
  'nestjs-redlock-universal',
] as const;

/** One of HTTP_APPS. */
export type HttpAppId = (typeof HTTP_APPS)[number];

/** Our app (the sample app) and the ceiling it is measured against. */
export const HTTP_OURS: HttpAppId = 'nestjs-distributed-lock';
export const HTTP_CEILING: HttpAppId = 'in-process mutex (ceiling)';
/** The sample app with a fixed lease on every lock (`defaults.leaseMs`), as the seed's decorator shape has it. */
export const HTTP_OURS_LEASE: HttpAppId = 'nestjs-distributed-lock (leaseMs 5 s)';
/** The route under this library in a module as bare as the ceiling's (the sample app adds a console, a guard, metrics). */
export const HTTP_OURS_BARE: HttpAppId = 'nestjs-distributed-lock (bare module)';
/** The fixed lease of HTTP_OURS_LEASE. */
export const HTTP_LEASE_MS = 5_000;

/** The item every request buys (one key: all requests contend). */
export const ITEM_ID = 'item1';

/**
 * Settings shared by every app: the sample app's own defaults (1 ms pause inside the
 * critical section, 60 s lock wait) so the peers get the same wait budget as our module.
 */
export function benchSampleConfig(redisUrl: string, port: number): SampleConfig {
  return {
    port,
    redisUrl,
    keyPrefix: 'bench:http:',
    seckillDelayMs: 1,
    lockWaitMs: 60_000,
    redisClient: 'ioredis',
  };
}
