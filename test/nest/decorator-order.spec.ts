import {
  Body,
  CallHandler,
  Controller,
  ExecutionContext,
  HttpCode,
  Injectable,
  NestInterceptor,
  Post,
  UseInterceptors,
} from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { ApiOperation, DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { Response } from 'express';
import { tap } from 'rxjs';
import request from 'supertest';
import {
  DISTRIBUTED_LOCK_METADATA,
  DistributedLock,
  DistributedLockModule,
  DistributedLockService,
} from '../../lib';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { closeApps, startApp } from '../support/nest-env';

@Injectable()
class TagInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler) {
    return next
      .handle()
      .pipe(tap(() => context.switchToHttp().getResponse<Response>().setHeader('x-tag', 'kept')));
  }
}

@Controller('orders')
class OrdersController {
  constructor(private readonly locks: DistributedLockService) {}

  // Our decorator is applied first (decorators run bottom-up): the others land on the wrapper.
  @Post('lock-applied-first')
  @HttpCode(202)
  @ApiOperation({ summary: 'lock applied first' })
  @UseInterceptors(TagInterceptor)
  @DistributedLock({ key: 'order:{0.id}' })
  async lockAppliedFirst(@Body() body: { id: number }) {
    return this.describeLock(body);
  }

  // Our decorator is applied last: it must carry over what the others put on the original.
  @DistributedLock({ key: 'order:{0.id}' })
  @Post('lock-applied-last')
  @HttpCode(202)
  @ApiOperation({ summary: 'lock applied last' })
  @UseInterceptors(TagInterceptor)
  async lockAppliedLast(@Body() body: { id: number }) {
    return this.describeLock(body);
  }

  private describeLock(body: { id: number }) {
    const lock = this.locks.current();
    return { id: body.id, key: lock?.key, token: lock?.fencingToken };
  }
}

let server: RedisServerProcess;
let app: INestApplication;

beforeAll(async () => {
  server = await startRedis();
  app = await startApp({
    imports: [DistributedLockModule.forRoot({ redis: server.url, keyPrefix: 'order-test:' })],
    controllers: [OrdersController],
  });
});

afterAll(async () => {
  await closeApps(app);
  await server?.stop();
});

describe.each(['lock-applied-first', 'lock-applied-last'])(
  '@DistributedLock() in either decorator order: %s',
  (path) => {
    it('still resolves the route, with its status code and other interceptors, holding the lock', async () => {
      const res = await request(app.getHttpServer()).post(`/orders/${path}`).send({ id: 17 }).expect(202);
      expect(res.headers['x-tag']).toBe('kept');
      expect(res.body).toMatchObject({ id: 17, key: 'order:17' });
      expect(res.body.token).toBeGreaterThan(0);
    });
  },
);

describe('metadata of other decorators', () => {
  it('keeps Swagger @ApiOperation in the generated document for both orders', () => {
    const document = SwaggerModule.createDocument(app, new DocumentBuilder().setTitle('t').build());
    expect(document.paths['/orders/lock-applied-first']?.post?.summary).toBe('lock applied first');
    expect(document.paths['/orders/lock-applied-last']?.post?.summary).toBe('lock applied last');
  });

  it('keeps the method name and marks the wrapper with the lock options', () => {
    const proto = OrdersController.prototype;
    expect(proto.lockAppliedFirst.name).toBe('lockAppliedFirst');
    expect(proto.lockAppliedLast.name).toBe('lockAppliedLast');
    expect(Reflect.getMetadata(DISTRIBUTED_LOCK_METADATA, proto.lockAppliedLast)).toEqual({
      key: 'order:{0.id}',
    });
  });
});
