/*
 * A lock lost while its holder still runs is logged through Nest's Logger, once per loss: a decorated
 * handler that outlives its fixed lease used to answer 2xx with nothing in the log (found by a new
 * user's first try), while the rest of its critical section ran unprotected.
 */
import { Injectable } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DistributedLock, DistributedLockModule } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { sleep, waitUntil } from '../support/wait';
import { closeApps, uniquePrefix } from '../support/nest-env';

@Injectable()
class Jobs {
  /** Outlives its 300 ms lease (the local lease end aborts its signal; the method goes on). */
  @DistributedLock({ key: 'lost:{0}', leaseMs: 300 })
  async slow(id: string): Promise<string> {
    await sleep(800);
    return id;
  }

  @DistributedLock({ key: 'kept:{0}', leaseMs: 5_000 })
  async quick(id: string): Promise<string> {
    return id;
  }
}

let server: RedisServerProcess;
let app: INestApplication | undefined;
const logger = new CapturingLogger();

beforeAll(async () => {
  server = await startRedis();
  const moduleRef = await Test.createTestingModule({
    imports: [DistributedLockModule.forRoot({ redis: server.url, keyPrefix: uniquePrefix('lost-log') })],
    providers: [Jobs],
  }).compile();
  app = moduleRef.createNestApplication({ logger });
  await app.init();
});

afterAll(async () => {
  await closeApps(app);
  await server?.stop();
});

const lostLines = () =>
  logger.lines.filter((l) => l.context === 'DistributedLock' && /was lost/.test(l.message));

describe('a lock lost while held', () => {
  it('is logged once as a warning, with its key, kind, token and reason', async () => {
    await expect(app!.get(Jobs).slow('1')).resolves.toBe('1');
    const [line, ...more] = await waitUntil(() => lostLines().length > 0 && lostLines(), {
      description: 'the lost-lock warning',
    });
    expect(more).toEqual([]);
    expect(line.level).toBe('warn');
    expect(line.message).toMatch(
      /^Lock "lost:1" \(mutex, token \d+\) held here was lost \(expired\) after \d+ ms/,
    );
  });

  it('is not logged for a lock released in time', async () => {
    const before = lostLines().length;
    await expect(app!.get(Jobs).quick('1')).resolves.toBe('1');
    await sleep(100);
    expect(lostLines()).toHaveLength(before);
  });
});
