import { createLockEngine } from '../core/create-lock-engine';
import type { LockEngine } from '../core/lock-engine';
import { isRedisClient, RedisClient } from '../core/redis-client';
import { closeConnection, resolveConnection } from '../core/redis-connection';
import type { ResolvedModuleOptions } from './module-options';

/** A lock engine plus the connections the Nest layer can ping for health(). */
export interface OpenedLockEngine {
  engine: LockEngine;
  /** Connections health() pings. */
  pingable: RedisClient[];
  /** Connections the Nest layer opened and must close after the engine. */
  owned: RedisClient[];
}

/**
 * Builds the engine with createLockEngine. With `redis`, the connection is resolved here (by the
 * engine's own resolveConnection, so URL and options handling are identical) and handed to the
 * engine as a client: health() needs a client to PING, and the engine does not expose one.
 * A client the user passed in stays the user's; one built here is closed by closeOpened().
 * With `redlock`, everything is passed through and only clients passed in are pinged.
 */
export function openLockEngine(settings: ResolvedModuleOptions): OpenedLockEngine {
  const { redis, redlock } = settings.connection;
  if (redlock !== undefined) {
    const engine = createLockEngine({ ...settings.engine, redlock });
    const nodes: readonly unknown[] = 'nodes' in redlock ? redlock.nodes : redlock;
    return { engine, pingable: nodes.filter(isRedisClient), owned: [] };
  }
  const connection = resolveConnection(redis!); // resolveModuleOptions made sure one of the two is set
  try {
    const engine = createLockEngine({ ...settings.engine, redis: connection.client });
    return { engine, pingable: [connection.client], owned: connection.owned ? [connection.client] : [] };
  } catch (err) {
    if (connection.owned) connection.client.disconnect();
    throw err;
  }
}

/** Closes the engine (releases locks, timers, subscriptions), then the connections opened here. */
export async function closeOpened(opened: OpenedLockEngine, timeoutMs: number): Promise<void> {
  try {
    await opened.engine.close();
  } finally {
    await Promise.all(opened.owned.map((client) => closeConnection(client, timeoutMs)));
  }
}

/** PINGs every connection, bounded by `timeoutMs`; resolves the slowest round trip in ms. */
export async function pingAll(clients: RedisClient[], timeoutMs: number): Promise<number> {
  const rounds = await Promise.all(clients.map((client) => pingWithin(client, timeoutMs)));
  return Math.max(0, ...rounds);
}

async function pingWithin(client: RedisClient, timeoutMs: number): Promise<number> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`PING got no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([client.ping(), deadline]);
    return Math.round((performance.now() - started) * 100) / 100;
  } finally {
    clearTimeout(timer);
  }
}
