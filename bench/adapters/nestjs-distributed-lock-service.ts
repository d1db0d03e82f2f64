import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DistributedLockModule, DistributedLockService } from '../../lib';
import { leaseLabel, type BenchLock, type BenchLockSettings } from './bench-lock';
import { engineAdapter } from './nestjs-distributed-lock';

/**
 * This library as a Nest app uses it: `DistributedLockModule.forRoot({ redis })` in an application
 * context, `DistributedLockService.acquire(key, { waitMs, leaseMs? })`, `handle.release()`.
 */
export async function create(redisUrl: string, settings: BenchLockSettings): Promise<BenchLock> {
  @Module({ imports: [DistributedLockModule.forRoot({ redis: redisUrl })] })
  class BenchLockModule {}
  const app = await NestFactory.createApplicationContext(BenchLockModule, { logger: ['error'] });
  const service = app.get(DistributedLockService);
  const name = `nestjs-distributed-lock via Nest service${leaseLabel(settings)}`;
  return engineAdapter(
    name,
    { acquire: service.acquire.bind(service), events: service.events, close: () => app.close() },
    settings,
  );
}
