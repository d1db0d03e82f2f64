import { Injectable } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { EventEmitter2, EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import type Redis from 'ioredis';
import { DistributedLock, DistributedLockModule, DistributedLockService } from '../../lib';
import { closeClient, redisClient } from '../support/redis-assertions';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { closeApps, startApp } from '../support/nest-env';

const PREFIX = 'event-test:';
let server: RedisServerProcess;
let probe: Redis;
let app: INestApplication;

interface OrderPaid {
  orderId: number;
}

@Injectable()
class ShippingListener {
  handled: { handler: string; key?: string; token?: number; lockInRedis: number }[] = [];

  constructor(private readonly locks: DistributedLockService) {}

  @OnEvent('order.paid')
  @DistributedLock({ key: 'ship:{0.orderId}' })
  async ship(event: OrderPaid): Promise<string> {
    return this.record('ship', event);
  }

  @DistributedLock({ key: 'invoice:{0.orderId}' })
  @OnEvent('order.paid')
  async invoice(event: OrderPaid): Promise<string> {
    return this.record('invoice', event);
  }

  private async record(handler: string, event: OrderPaid): Promise<string> {
    const lock = this.locks.current();
    const lockInRedis = await probe.exists(`${PREFIX}{${handler}:${event.orderId}}:m`);
    this.handled.push({ handler, key: lock?.key, token: lock?.fencingToken, lockInRedis });
    return handler;
  }
}

beforeAll(async () => {
  server = await startRedis();
  probe = redisClient(server.url);
  app = await startApp({
    imports: [
      EventEmitterModule.forRoot(),
      DistributedLockModule.forRoot({ redis: server.url, keyPrefix: PREFIX }),
    ],
    providers: [ShippingListener],
  });
});

afterAll(async () => {
  await closeApps(app);
  if (probe) await closeClient(probe);
  await server?.stop();
});

describe('@DistributedLock() on @OnEvent handlers', () => {
  it('runs both handlers (either decorator order) holding their locks when the event is emitted', async () => {
    const results = await app.get(EventEmitter2).emitAsync('order.paid', { orderId: 12 });
    expect(results.sort()).toEqual(['invoice', 'ship']);
    const handled = app.get(ShippingListener).handled;
    expect(handled).toHaveLength(2);
    expect(handled).toEqual(
      expect.arrayContaining([
        { handler: 'ship', key: 'ship:12', token: expect.any(Number), lockInRedis: 1 },
        { handler: 'invoice', key: 'invoice:12', token: expect.any(Number), lockInRedis: 1 },
      ]),
    );
    expect(await probe.exists(`${PREFIX}{ship:12}:m`, `${PREFIX}{invoice:12}:m`)).toBe(0);
  });
});
