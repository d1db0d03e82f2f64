/*
 * The console's options as an app that mounts it sees them, through HTTP: by default a force release
 * is refused (403) and the lock stays with its holder; `guards` protect the console's routes only;
 * `path` moves it.
 */
import { CanActivate, Controller, ExecutionContext, Get, Injectable } from '@nestjs/common';
import request from 'supertest';
import { DistributedLockModule, DistributedLockService } from '../../lib';
import { DistributedLockConsoleModule } from '../../lib/console';
import { closeApps, startApp, uniquePrefix } from '../support/nest-env';
import { startRedis, type RedisServerProcess } from '../support/redis-server';

@Injectable()
class OpsHeader implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return (
      context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-ops'] === 'yes'
    );
  }
}

@Controller('public')
class PublicController {
  @Get()
  hello(): string {
    return 'hello';
  }
}

let server: RedisServerProcess;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

const lockModule = () =>
  DistributedLockModule.forRoot({ redis: server.url, keyPrefix: uniquePrefix('console-options') });

describe('DistributedLockConsoleModule options', () => {
  it('refuses a force release by default (403), and the holder keeps its lock', async () => {
    const app = await startApp({ imports: [lockModule(), DistributedLockConsoleModule.register()] });
    try {
      const locks = app.get(DistributedLockService);
      const held = await locks.acquire('order:1');
      const res = await request(app.getHttpServer())
        .post('/locks/api/locks/order%3A1/release')
        .send({ reason: 'stuck' });
      expect(res.status).toBe(403);
      expect(res.body.message).toMatch(/allowForceRelease: false/);
      expect(held.signal.aborted).toBe(false);
      expect(held.isHeld).toBe(true);
      expect(await locks.isLocked('order:1')).toBe(true);
      expect(await held.release()).toBe(true);
    } finally {
      await closeApps(app);
    }
  });

  it('mounts under `path`, behind its own `guards`, without guarding the rest of the app', async () => {
    const app = await startApp({
      imports: [
        lockModule(),
        DistributedLockConsoleModule.register({ path: 'ops/locks', guards: [OpsHeader] }),
      ],
      controllers: [PublicController],
    });
    try {
      const http = request(app.getHttpServer());
      expect((await http.get('/ops/locks/api/locks')).status).toBe(403);
      const listed = await http.get('/ops/locks/api/locks').set('x-ops', 'yes');
      expect(listed.status).toBe(200);
      expect(listed.body).toMatchObject({ locks: expect.any(Array) });
      expect((await http.get('/locks/api/locks').set('x-ops', 'yes')).status).toBe(404);
      expect((await http.get('/public')).status).toBe(200);
    } finally {
      await closeApps(app);
    }
  });
});
