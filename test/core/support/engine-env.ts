/*
 * Shared set-up of the engine specs: one real redis-server per spec file, an admin client for
 * assertions, engines that are always closed, and small probes (commands sent, hold counts,
 * signal aborts) that never look at the clock.
 */
import Redis, { RedisOptions } from 'ioredis';
import { createLockEngine, CreateLockEngineOptions } from '../../../lib/core';
import { LockEngine } from '../../../lib/core/engine/lock-engine';
import type { LockEventMap } from '../../../lib/core/engine/lock-events';
import { closeClient, redisClient } from '../../support/redis-assertions';
import { redisInfo } from '../../support/redis-command';
import { startRedis, RedisServerProcess } from '../../support/redis-server';

/** One redis-server for a spec file, its admin client, and the engines the tests built on it. */
export interface EngineEnv {
  server: RedisServerProcess;
  url: string;
  /** A plain client for assertions (not used by any engine). */
  admin: Redis;
  /** Builds an engine on this server (URL unless `redis` is given); closed by `closeEngines()`. */
  engine(options?: Partial<CreateLockEngineOptions>): LockEngine;
  /** A plain client for a test (closed by `closeEngines()`). */
  client(options?: RedisOptions): Redis;
  /** Closes every engine and client made since the last call (call in afterEach). */
  closeEngines(): Promise<void>;
  /** Stops everything (call in afterAll). */
  stop(): Promise<void>;
}

/** Starts a redis-server and returns the helpers bound to it. */
export async function startEngineEnv(): Promise<EngineEnv> {
  const server = await startRedis();
  const admin = redisClient(server.url);
  let engines: LockEngine[] = [];
  let clients: Redis[] = [];
  const closeEngines = async (): Promise<void> => {
    const e = engines;
    const c = clients;
    engines = [];
    clients = [];
    await Promise.all(e.map((engine) => engine.close()));
    await Promise.all(c.map((client) => closeClient(client)));
  };
  return {
    server,
    url: server.url,
    admin,
    engine(options = {}) {
      const engine = createLockEngine({ redis: server.url, ...options });
      engines.push(engine);
      return engine;
    },
    client(options: RedisOptions = {}) {
      const client = redisClient(server.url, options);
      clients.push(client);
      return client;
    },
    closeEngines,
    async stop() {
      await closeEngines();
      await closeClient(admin);
      await server.stop();
    },
  };
}

/** A key no other test uses (tests share a server but never a key). */
let seq = 0;
export function uniqueKey(label: string): string {
  seq += 1;
  return `${label}:${process.pid}:${seq}:${Math.random().toString(36).slice(2, 8)}`;
}

/** Commands the server executed (INFO commandstats), by command name, INFO itself left out. */
export async function commandCounts(port: number): Promise<Map<string, number>> {
  const stats = await redisInfo(port, 'commandstats');
  const counts = new Map<string, number>();
  for (const [field, value] of Object.entries(stats)) {
    if (!field.startsWith('cmdstat_')) continue;
    const name = field.slice('cmdstat_'.length);
    if (name === 'info') continue;
    const calls = /(?:^|,)calls=(\d+)/.exec(value);
    const rejected = /(?:^|,)rejected_calls=(\d+)/.exec(value);
    const failed = /(?:^|,)failed_calls=(\d+)/.exec(value);
    // A rejected or failed call was still sent; count it as sent.
    counts.set(name, Number(calls?.[1] ?? 0) + Number(rejected?.[1] ?? 0) + Number(failed?.[1] ?? 0));
  }
  return counts;
}

/** Every command the server received while `action` ran (INFO excluded), as name → count. */
export async function commandsDuring(
  port: number,
  action: () => Promise<unknown>,
): Promise<Record<string, number>> {
  const before = await commandCounts(port);
  await action();
  // Let anything the action may have queued reach the server before counting again.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const after = await commandCounts(port);
  const delta: Record<string, number> = {};
  for (const [name, count] of after) {
    const diff = count - (before.get(name) ?? 0);
    if (diff !== 0) delta[name] = diff;
  }
  return delta;
}

/** Number of holds in a reentrant-mutex hash (fields other than owner and fence); 0 when absent. */
export async function holdCount(admin: Redis, lockName: string): Promise<number> {
  const fields = await admin.hkeys(lockName);
  // 'w' marks that another owner waited (the release then publishes); it is not a hold.
  return fields.filter((f) => f !== 'owner' && f !== 'fence' && f !== 'w').length;
}

/** Resolves with the signal's reason once it aborts (at once if it already has). */
export function whenAborted(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) =>
    signal.addEventListener('abort', () => resolve(signal.reason), { once: true }),
  );
}

/** Tracks whether a promise has settled, without ever leaving it unhandled. */
export function track<T>(promise: Promise<T>): { readonly settled: boolean; readonly result: Promise<T> } {
  let settled = false;
  const result = promise.finally(() => {
    settled = true;
  });
  result.catch(() => undefined);
  return {
    get settled() {
      return settled;
    },
    result,
  };
}

/** Resolves at the next emission of `name` on `engine.events` that satisfies `predicate`. */
export function nextEvent<K extends keyof LockEventMap>(
  engine: LockEngine,
  name: K,
  predicate: (payload: EventPayload<K>) => boolean = () => true,
): Promise<EventPayload<K>> {
  const events = engine.events as unknown as {
    on(n: K, l: (p: EventPayload<K>) => void): void;
    off(n: K, l: (p: EventPayload<K>) => void): void;
  };
  return new Promise((resolve) => {
    const listener = (payload: EventPayload<K>): void => {
      if (!predicate(payload)) return;
      events.off(name, listener);
      resolve(payload);
    };
    events.on(name, listener);
  });
}

/** The payload of one lock event. */
export type EventPayload<K extends keyof LockEventMap> = LockEventMap[K][0];
