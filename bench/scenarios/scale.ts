import { spawnWorker } from '../../test/support/spawn-worker';
import type { BenchProfile } from '../config';
import type { RedisTarget } from '../redis-target';
import type { HeldStep, WaitersStep } from '../report/results';

/** Runs worker/scale-worker.ts (our library only) and collects its measurements. */
export async function runScale(
  target: RedisTarget,
  profile: BenchProfile,
  log: (line: string) => void,
): Promise<{ held: HeldStep[]; waiters?: WaitersStep }> {
  await target.clean();
  const worker = spawnWorker<{ type: string } & Record<string, unknown>>('bench/worker/scale-worker.ts', {
    env: { BENCH_REDIS_URL: target.url, BENCH_SCALE: JSON.stringify(profile.scale) },
  });
  try {
    const held: HeldStep[] = [];
    for (const n of profile.scale.heldSteps) {
      const step = (await worker.waitForMessage((m) => m.type === 'held', 180_000)) as unknown as HeldStep;
      held.push(step);
      log(
        `  ${n} locks held: heap ${step.heapMb} MB, ${step.activeTimers} active timers, ` +
          `${step.renewalClientCmdsPerSec} renewal round trips/s (${step.renewalServerCmdsPerSec} Redis cmds/s)`,
      );
    }
    const waiters = (await worker.waitForMessage(
      (m) => m.type === 'waiters',
      300_000,
    )) as unknown as WaitersStep;
    log(
      `  ${waiters.waiters} waiters on ${waiters.keys} keys: ${waiters.serverChannels} channels, ` +
        `${waiters.subscribersPerChannel.max} subscriber(s)/channel, heap ${waiters.heapMb} MB, drained in ${waiters.drainMs} ms`,
    );
    await worker.waitForMessage((m) => m.type === 'end', 60_000);
    return { held, waiters };
  } catch (err) {
    throw new Error(`scale worker: ${err instanceof Error ? err.message : String(err)}\n${worker.stderr()}`);
  } finally {
    await worker.stop(5_000);
  }
}
