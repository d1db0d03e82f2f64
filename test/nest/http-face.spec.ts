import { Controller, Get, Param, Query } from '@nestjs/common';
import { Observable } from 'rxjs';
import { DistributedLock, DistributedLockService } from '../../lib';
import { createLockEngine, type LockEngine } from '../../lib/core/public';
import { sleep, waitUntil } from '../support/wait';
import { baseUrl, PLATFORMS, uniquePrefix, useNestEnv, type Platform } from '../support/nest-env';

/*
 * The HTTP face of issue 10 on Express and on Fastify, with nothing but DistributedLockModule.forRoot():
 * manual locks answer 423, bad keys 400, skip on a route is refused, Observable handlers hold the lock
 * for their whole life, and Retry-After comes from the key's recent hold times.
 */
const state = { inside: 0, maxInside: 0, served: 0, hanging: 0, holding: 0 };

@Controller()
class FaceController {
  constructor(private readonly locks: DistributedLockService) {}

  /** A manual lock in a route, no decorator: busy must still answer 423. */
  @Get('manual/:id')
  async manual(@Param('id') id: string): Promise<{ id: string }> {
    return this.locks.using(`manual:${id}`, { waitMs: 0 }, async () => ({ id }));
  }

  /** The key is built from the query: a 600-character value makes a key over 512 bytes. */
  @Get('named')
  @DistributedLock({ key: 'named:{0}', waitMs: 0 })
  async named(@Query('name') name: string): Promise<{ name: number }> {
    return { name: name.length };
  }

  /** 10 concurrent subscribers must take turns: `inside` never exceeds 1. */
  @Get('stream')
  @DistributedLock({ key: 'stream', waitMs: 20_000 })
  stream(): Observable<string> {
    return new Observable<string>((subscriber) => {
      state.inside++;
      state.maxInside = Math.max(state.maxInside, state.inside);
      const timer = setTimeout(() => {
        state.inside--;
        state.served++;
        subscriber.next('done');
        subscriber.complete();
      }, 30);
      return () => clearTimeout(timer);
    });
  }

  /** Never completes by itself: only an unsubscribe (client abort) ends it. */
  @Get('hang')
  @DistributedLock({ key: 'hang', waitMs: 0 })
  hang(): Observable<string> {
    return new Observable<string>((subscriber) => {
      state.hanging++;
      const timer = setTimeout(() => subscriber.complete(), 50_000);
      return () => {
        state.hanging--;
        clearTimeout(timer);
      };
    });
  }

  /** The same lock as `hang`, answering at once when it is free. */
  @Get('after-hang')
  @DistributedLock({ key: 'hang', waitMs: 0 })
  afterHang(): Observable<string> {
    return new Observable<string>((subscriber) => {
      subscriber.next('in');
      subscriber.complete();
    });
  }

  /** Holds a watchdog lock (no leaseMs) for 1.5 s. */
  @Get('held')
  async held(): Promise<string> {
    return this.locks.using('held', { waitMs: 0 }, async () => {
      state.holding++;
      await sleep(1_500);
      state.holding--;
      return 'held';
    });
  }
}

@Controller()
class SkipController {
  @Get('skip')
  @DistributedLock({ key: 'skip', onBusy: 'skip' })
  async skip(): Promise<string> {
    return 'never';
  }
}

const env = useNestEnv();

/** An app of `controller` alone with DistributedLockModule.forRoot(), listening on `platform`. */
function listen(controller: new (...args: never[]) => unknown, keyPrefix: string, platform: Platform) {
  return env.app(
    { imports: [env.lockModule({ keyPrefix })], controllers: [controller] },
    { platform, listen: true },
  );
}

describe.each(PLATFORMS)('HTTP face on %s', (platform) => {
  let other: LockEngine;
  let base: string;
  const prefix = uniquePrefix('http-face');

  beforeAll(async () => {
    base = await baseUrl(await listen(FaceController, prefix, platform));
    other = createLockEngine({ redis: env.url, keyPrefix: prefix });
  });

  afterAll(async () => {
    await other?.close();
  });

  beforeEach(() => Object.assign(state, { inside: 0, maxInside: 0, served: 0, hanging: 0, holding: 0 }));

  it('answers 423 with Retry-After when a manual using() in a route finds the lock busy', async () => {
    const held = await other.acquire('manual:1', { leaseMs: 5_000 });
    try {
      const busy = await fetch(`${base}/manual/1`);
      expect(busy.status).toBe(423);
      expect(Number(busy.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } finally {
      await held.release();
    }
    const free = await fetch(`${base}/manual/1`);
    expect(free.status).toBe(200);
    expect(await free.json()).toEqual({ id: '1' });
  });

  it('answers 400 when request data makes the lock key invalid (600-character segment)', async () => {
    const bad = await fetch(`${base}/named?name=${'x'.repeat(600)}`);
    expect(bad.status).toBe(400);
    // Nest's usual body for a 400, with the reason in `message`.
    expect(await bad.json()).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.any(String) });
    const good = await fetch(`${base}/named?name=${'x'.repeat(6)}`);
    expect(good.status).toBe(200);
  });

  it('lets one of 10 concurrent Observable requests inside the work at a time', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, () => fetch(`${base}/stream`)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(state.served).toBe(10);
    expect(state.maxInside).toBe(1);
  });

  it('releases the Observable route lock when the client aborts the request', async () => {
    const abort = new AbortController();
    const hanging = fetch(`${base}/hang`, { signal: abort.signal }).then(
      () => 'answered',
      (error: Error) => error.name,
    );
    await waitUntil(() => state.hanging === 1, { description: 'the hang handler subscribed' });
    expect((await fetch(`${base}/after-hang`)).status).toBe(423);
    abort.abort();
    expect(await hanging).toBe('AbortError');
    // The lock is released on unsubscribe, not after the 50 s timer or a lease.
    await waitUntil(() => state.hanging === 0, { timeoutMs: 3_000, description: 'unsubscribe on abort' });
    await waitUntil(async () => (await fetch(`${base}/after-hang`)).status === 200, {
      timeoutMs: 3_000,
      description: 'the next request getting the lock',
    });
  });

  it('sets Retry-After from the key’s recent hold time, not the 30 s watchdog lease', async () => {
    expect((await fetch(`${base}/held`)).status).toBe(200); // one completed 1.5 s hold
    const first = fetch(`${base}/held`);
    await waitUntil(() => state.holding === 1, { description: 'the second hold to start' });
    const busy = await fetch(`${base}/held`);
    expect(busy.status).toBe(423);
    const seconds = Number(busy.headers.get('retry-after'));
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(3);
    expect((await first).status).toBe(200);
  });

  it("refuses onBusy: 'skip' on a route handler at start-up", async () => {
    const refused = listen(SkipController, uniquePrefix('skip'), platform);
    await expect(refused).rejects.toThrow(TypeError);
    await expect(refused).rejects.toThrow(
      "@DistributedLock({ onBusy: 'skip' }) on the route handler SkipController.skip: a skipped request would answer 2xx",
    );
  });
});
