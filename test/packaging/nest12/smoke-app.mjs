// A tiny Nest 12 app (ESM) on the packed nestjs-distributed-lock. Plain JavaScript has no decorator
// syntax, so decorators are applied with Reflect.decorate — what TypeScript's emitted code does.
import 'reflect-metadata';
import { Controller, Get, Inject, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DistributedLock, DistributedLockModule, DistributedLockService } from 'nestjs-distributed-lock';

/** Runs method decorators on `Class.prototype[name]` the way TypeScript's __decorate does. */
function decorateMethod(Class, name, decorators) {
  const descriptor = Object.getOwnPropertyDescriptor(Class.prototype, name);
  Object.defineProperty(
    Class.prototype,
    name,
    Reflect.decorate(decorators, Class.prototype, name, descriptor),
  );
}

export class SeckillController {
  constructor(locks) {
    this.locks = locks;
  }

  async buy(id) {
    const lock = this.locks.current();
    return { id, key: lock?.key, fencingToken: lock?.fencingToken };
  }
}
Reflect.decorate([Controller('seckill')], SeckillController);
Inject(DistributedLockService)(SeckillController, undefined, 0);
Param('id')(SeckillController.prototype, 'buy', 0);
decorateMethod(SeckillController, 'buy', [Get(':id'), DistributedLock({ key: 'seckill:{0}', waitMs: 0 })]);

export class AppModule {}
Reflect.decorate([], AppModule);

/** Creates, initialises and starts the app on a free port; resolves `{ app, url }`. */
export async function startSmokeApp(redisUrl) {
  const root = {
    module: AppModule,
    imports: [DistributedLockModule.forRoot({ redis: redisUrl, keyPrefix: 'nest12:' })],
    controllers: [SeckillController],
  };
  const app = await NestFactory.create(root, { logger: false });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address();
  return { app, url: `http://127.0.0.1:${port}` };
}
