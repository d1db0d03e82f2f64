// The app of the built-app cells (scripts/test-toolchains.cjs): listens on a free port and prints it.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { DistributedLockService } from 'nestjs-distributed-lock';
import { AppModule } from './app.module';

async function main(): Promise<void> {
  const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
  // One lock before the first request: the connection and the scripts are ready when the route's
  // waitMs: 0 call comes (a cold start on a loaded machine can take longer than that call's bound).
  await app.get(DistributedLockService).using('warm-up', {}, async () => undefined);
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  console.log(`LISTENING ${address.port}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
