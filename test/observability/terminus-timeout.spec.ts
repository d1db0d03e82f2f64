/*
 * Terminus with a frozen Redis (SIGSTOP): the health indicator answers down after its own timeout
 * (default 1 s, within a Kubernetes probe's default), not after the lock service's 5 s command
 * timeout, and says so in the reason; bad timeouts are refused before anything is asked.
 */
import { Controller, Get, INestApplication } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import request from 'supertest';
import { DistributedLockModule } from '../../lib';
import { DistributedLockHealthIndicator, DistributedLockHealthModule } from '../../lib/terminus';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
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
let app: INestApplication;

beforeAll(async () => {
  server = await startRedis();
  app = await startApp({
    imports: [
      // The default command timeout: a frozen Redis answers nothing for 5 s.
      DistributedLockModule.forRoot({
        redis: server.url,
        keyPrefix: uniquePrefix('health-timeout'),
        isGlobal: true,
      }),
      DistributedLockHealthModule,
    ],
    controllers: [HealthController],
  });
});

afterAll(async () => {
  if (server?.paused) server.resume();
  await closeApps(app);
  await server?.stop();
});

describe('DistributedLockHealthIndicator with a frozen Redis', () => {
  it('reports down after its own timeout, naming it, and up again once Redis answers', async () => {
    const http = () => request(app.getHttpServer()).get('/health');
    expect((await http()).status).toBe(200);

    server.pause();
    const down = await http();
    expect(down.status).toBe(503);
    // Only the indicator's timer writes this reason: the PING it started is still waiting (5 s).
    expect(down.body.error['distributed-lock']).toEqual({
      status: 'down',
      reason: "no answer from the lock service's Redis within 1000 ms",
    });
    const indicator = app.get(DistributedLockHealthIndicator);
    await expect(indicator.isHealthy('locks', { timeoutMs: 50 })).resolves.toEqual({
      locks: { status: 'down', reason: "no answer from the lock service's Redis within 50 ms" },
    });

    server.resume();
    expect((await http()).status).toBe(200);
  });

  it('refuses a timeout that is not a whole number of ms from 1, before asking anything', async () => {
    const indicator = app.get(DistributedLockHealthIndicator);
    for (const timeoutMs of [0, -1, 1.5, NaN, Infinity, 2 ** 31]) {
      await expect(indicator.isHealthy('locks', { timeoutMs })).rejects.toThrow(RangeError);
    }
    await expect(indicator.isHealthy('locks', { timeoutMs: '1000' as never })).rejects.toThrow(TypeError);
    await expect(indicator.isHealthy('locks', { timeout: 1000 } as never)).rejects.toThrow(
      'Unknown isHealthy() option "timeout"',
    );
  });
});
