import type { Redis } from 'ioredis';
import { isCluster, RedisClient } from '../redis/redis-client';

/**
 * Replies and client errors that mean "a failover or a resharding is under way": the master is
 * gone or being replaced, the slot is moving, the client is reconnecting. On a Cluster or a
 * Sentinel deployment these pass within seconds, so a script is worth retrying until its deadline.
 */
const FAILOVER_ERROR =
  /^(?:CLUSTERDOWN|TRYAGAIN|MASTERDOWN|LOADING|READONLY)\b|Connection is closed|Too many Cluster redirections|max retries per request|ECONNREFUSED|ECONNRESET|EPIPE|None of startup nodes|Cluster isn't ready|Stream isn't writeable/i;

/** True when `err` is one of the transient failover / resharding errors. */
export function isFailoverError(err: unknown): boolean {
  return err instanceof Error && FAILOVER_ERROR.test(err.message);
}

/**
 * Whether scripts on `client` ride out failovers: yes on a Cluster and on a Sentinel-managed
 * master (a new master is seconds away); no on a single server, where "down" means down and the
 * caller should hear it at once.
 */
export function ridesOutFailover(client: RedisClient): boolean {
  return isCluster(client) || Boolean((client as Redis).options?.sentinels?.length);
}
