/*
 * Terminus 11: a real Nest app on Express whose /health uses DistributedLockHealthIndicator reports
 * up, then down with the reason while Redis is stopped, then up again once it is back.
 */
import { Controller, Get, INestApplication } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import request from 'supertest';
import { DistributedLockModule, DistributedLockService } from '../../lib';
import { DistributedLockHealthIndicator, DistributedLockHealthModule } from '../../lib/terminus';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { waitUntil } from '../support/wait';
import { closeApps, startApp, uniquePrefix } from '../support/nest-env';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly locks: DistributedLockHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.locks.isHealthy()]);
  }
}

let server: RedisServerProcess;
let app: INestApplication | undefined;

beforeAll(async () => {
  server = await startRedis();
});
afterEach(async () => {
  await closeApps(app);
  app = undefined;
});
afterAll(async () => {
  await server?.stop();
});

describe('DistributedLockHealthIndicator', () => {
  it('reports up, down with the reason while Redis is stopped, and up again', async () => {
    app = await startApp({
      imports: [
        DistributedLockModule.forRoot({
          redis: server.url,
          keyPrefix: uniquePrefix('terminus'),
          commandTimeoutMs: 500,
          isGlobal: true,
        }),
        DistributedLockHealthModule,
      ],
      controllers: [HealthController],
    });
    const held = await app.get(DistributedLockService).acquire('k', { leaseMs: 60_000 });
    const http = () => request(app!.getHttpServer()).get('/health');

    const up = await http();
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({
      status: 'ok',
      info: { 'distributed-lock': { status: 'up', held: 1, waiting: 0, redisMs: expect.any(Number) } },
    });

    server.kill('SIGKILL');
    await server.exited;
    const down = await http();
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({
      status: 'error',
      error: { 'distributed-lock': { status: 'down', held: 1, reason: expect.any(String) } },
    });
    expect(down.body.error['distributed-lock'].reason.length).toBeGreaterThan(0);

    await server.restart();
    const back = await waitUntil(
      async () => {
        const res = await http();
        return res.status === 200 && res;
      },
      { description: '/health up again', timeoutMs: 20_000 },
    );
    expect(back.body.info['distributed-lock']).toMatchObject({ status: 'up' });
    await held.release();
  });

  it('takes a custom key and answers down with the reason once the service is closed', async () => {
    app = await startApp({
      imports: [
        DistributedLockModule.forRoot({
          redis: server.url,
          keyPrefix: uniquePrefix('terminus'),
          isGlobal: true,
        }),
        DistributedLockHealthModule,
      ],
    });
    const indicator = app.get(DistributedLockHealthIndicator);
    await expect(indicator.isHealthy('locks')).resolves.toMatchObject({ locks: { status: 'up' } });
    await app.get(DistributedLockService).onApplicationShutdown();
    await expect(indicator.isHealthy('locks')).resolves.toEqual({
      locks: { status: 'down', reason: expect.stringMatching(/closed|shut/i), held: 0, waiting: 0 },
    });
  });
});
