/*
 * A stall of the whole machine (a frozen VM, a starved host, a container's CPU quota): the caller's
 * event loop and Redis both stop past a call's budget, and when both run again, Redis gets its CPU a
 * moment after the caller, so its reply reaches the socket after the caller's timers ran. The time the
 * caller did not run is no evidence that Redis does not answer: the call takes the reply that comes
 * just after the stall (the runtime's reply grace, 50 ms), and a Redis that still does not answer
 * fails the call as before. Only an answer gets the grace: a lease's local end is told at once.
 * Both halves are frozen for real: redis-server with SIGSTOP, this process with a synchronous loop
 * that a shell ends (it writes a file) 10 ms before it sends Redis SIGCONT.
 * Under timing/: the 10 ms must stay well inside the 50 ms, with nothing else running.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { LockRedisError } from '../../../lib/core';
import { faultEngine } from '../../support/fault-engine';
import { useFaultEnv } from '../../support/fault-env';
import { makeTempDir } from '../../support/process-reaper';
import { stallLoop } from '../../support/stall-loop';

const env = useFaultEnv();

afterEach(() => {
  if (env.redis?.paused) env.redis.resume();
});

/**
 * Holds this process' loop until a shell, after `ms`, writes a file; the shell sends Redis SIGCONT
 * 10 ms after that. Resolves when this process runs again.
 */
async function stallThenThawRedisLater(ms: number): Promise<void> {
  const marker = join(makeTempDir('stall-'), 'thawed');
  const script = `sleep ${ms / 1000}; : > "$1"; sleep 0.01; kill -CONT ${env.redis.pid}`;
  const shell = spawn('sh', ['-c', script, 'sh', marker], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => shell.once('exit', () => resolve()));
  // After the call's microtasks (its command is written and waits in frozen Redis' socket).
  await new Promise<void>((resolve) =>
    setImmediate(() => {
      while (!existsSync(marker)) {
        // busy: nothing else of this process runs meanwhile
      }
      resolve();
    }),
  );
  await exited;
}

describe('a stall of this process and of Redis together, past the call budget', () => {
  it.each([
    ['a reentrant mutex', {}],
    ['a token lock', { reentrant: false }],
    ['a semaphore permit', { limit: 2 }],
  ] as const)(
    'grants %s under waitMs 0 when Redis runs again 10 ms after the caller',
    async (_label, options) => {
      const engine = faultEngine(env.redis.url);
      try {
        // Connected and the scripts loaded: the call below sends its one command at once.
        await (await engine.acquire('stall:warm', { ...options, waitMs: 5_000 })).release();
        env.redis.pause();
        const call = engine.acquire('stall:both', { ...options, waitMs: 0 }).then(
          (handle) => ({ handle }),
          (error: unknown) => ({ error }),
        );
        await stallThenThawRedisLater(700);
        const outcome = await call;
        expect('error' in outcome ? String(outcome.error) : 'granted').toBe('granted');
        const { handle } = outcome as { handle: Awaited<ReturnType<typeof engine.acquire>> };
        expect(await handle.release()).toBe(true);
      } finally {
        await engine.close();
      }
    },
  );

  it('still fails the call when Redis stays frozen after the stall', async () => {
    const engine = faultEngine(env.redis.url);
    try {
      await (await engine.acquire('stall:warm', { waitMs: 5_000 })).release();
      env.redis.pause();
      const call = engine.acquire('stall:frozen', { waitMs: 0 }).catch((e: unknown) => e);
      await new Promise<void>((resolve) =>
        setImmediate(() => {
          stallLoop(700);
          resolve();
        }),
      );
      const err = await call;
      expect(err).toBeInstanceOf(LockRedisError);
      expect((err as Error).message).toMatch(/did not answer mutex-acquire within 401 ms/);
    } finally {
      env.redis.resume();
      await engine.close();
    }
  });

  it('ends a fixed lease locally at the first turn after the stall: only an answer gets the grace', async () => {
    const engine = faultEngine(env.redis.url);
    try {
      const handle = await engine.acquire('stall:lease', { leaseMs: 300 });
      const order: string[] = [];
      handle.signal.addEventListener('abort', () => order.push('lease ended'));
      // The lease's local end fell due during the stall: the holder must hear it before anything
      // else runs long, not a grace later (its Redis key may be gone already).
      await new Promise<void>((resolve) =>
        setImmediate(() => {
          stallLoop(700);
          setTimeout(() => {
            order.push('25 ms after the stall');
            resolve();
          }, 25);
        }),
      );
      expect(order).toEqual(['lease ended', '25 ms after the stall']);
      await handle.release();
    } finally {
      await engine.close();
    }
  });
});
