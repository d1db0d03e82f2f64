import type { RedisGateway } from '../redis/redis-gateway';

/** Sharded pub/sub (SSUBSCRIBE / SPUBLISH) arrived in Redis 7.0. */
const SHARDED_SINCE_MAJOR = 7;

/** True when `INFO server` text names a Redis (or compatible) version with sharded pub/sub. */
export function hasShardedPubSub(infoServer: string): boolean {
  const match = /^redis_version:(\d+)\./m.exec(infoServer);
  return match !== null && Number(match[1]) >= SHARDED_SINCE_MAJOR;
}

/**
 * Chooses how wake-ups travel on a Cluster: SPUBLISH to the lock slot's shard on Redis 7 (the
 * message stays on one shard instead of crossing the whole cluster bus), PUBLISH before that.
 * Asks one node's `INFO server` before the first script runs; an unreachable cluster keeps
 * PUBLISH (which every version delivers) and is asked again before the next script.
 */
export function chooseClusterPublish(gateway: RedisGateway, timeoutMs: number): void {
  gateway.beforeScripts(async () => {
    const info = await gateway.ask(
      (door) => door.command(['INFO', 'server']),
      timeoutMs,
      () => new Error(`INFO server did not answer within ${timeoutMs} ms`),
    );
    gateway.publishCommand = hasShardedPubSub(String(info)) ? 'SPUBLISH' : 'PUBLISH';
    return true;
  }, false);
}
