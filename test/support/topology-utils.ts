import type { RedisServerProcess } from './redis-server';

/** A `{ host, port }` pair as ioredis takes for cluster startup nodes and sentinels. */
export interface HostPort {
  host: string;
  port: number;
}

/** Stops every server in parallel; never rejects (teardown must reach every process). */
export async function stopAll(servers: readonly RedisServerProcess[]): Promise<void> {
  await Promise.allSettled(servers.map((s) => s.stop()));
}

/**
 * Runs the start functions in parallel. If any fails, stops the ones that started and
 * rethrows the first failure, so a half-started topology never leaks processes.
 */
export async function startAll(
  starters: ReadonlyArray<() => Promise<RedisServerProcess>>,
): Promise<RedisServerProcess[]> {
  const results = await Promise.allSettled(starters.map((start) => start()));
  const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await stopAll(started);
    throw failed.reason;
  }
  return started;
}
