/*
 * Shared set-up of the read-write / fair / semaphore specs: one real redis-server per spec file,
 * an admin client for assertions, engines and workers that are always closed, and probes that read
 * Redis or the server's command counters, never the clock.
 */
import * as path from 'path';
import Redis from 'ioredis';
import { createLockEngine, CreateLockEngineOptions } from '../../../lib/core';
import { KeySpace, LockKeyNames, LockKindTag } from '../../../lib/core/engine/key-space';
import { LockEngine } from '../../../lib/core/engine/lock-engine';
import { closeClient, redisClient } from '../../support/redis-assertions';
import { redisInfo } from '../../support/redis-command';
import { startRedis, RedisServerProcess } from '../../support/redis-server';
import { spawnWorker, SpawnWorkerOptions, WorkerProcess } from '../../support/spawn-worker';

/** Key prefix of every lock in the family specs. */
export const PREFIX = 'fam:';

/** One redis-server for a spec file, its admin client, and what the tests built on it. */
export interface FamilyEnv {
  server: RedisServerProcess;
  url: string;
  /** A plain client for assertions (used by no engine). */
  admin: Redis;
  /** Builds an engine on this server with PREFIX; closed by `cleanup()`. */
  engine(options?: Partial<CreateLockEngineOptions>): LockEngine;
  /** Spawns a worker from test/family/workers with REDIS_URL and KEY_PREFIX set; stopped by `cleanup()`. */
  worker<M = any>(file: string, options?: SpawnWorkerOptions): WorkerProcess<M>;
  /** Closes every engine and stops every worker made since the last call (call in afterEach). */
  cleanup(): Promise<void>;
  /** Stops everything (call in afterAll). */
  stop(): Promise<void>;
}

/** Starts a redis-server and returns the helpers bound to it. */
export async function startFamilyEnv(): Promise<FamilyEnv> {
  const server = await startRedis();
  const admin = redisClient(server.url);
  let engines: LockEngine[] = [];
  let workers: WorkerProcess[] = [];
  const cleanup = async (): Promise<void> => {
    const [e, w] = [engines, workers];
    engines = [];
    workers = [];
    await Promise.all(w.map((worker) => worker.stop()));
    await Promise.all(e.map((engine) => engine.close()));
  };
  return {
    server,
    url: server.url,
    admin,
    engine(options = {}) {
      const engine = createLockEngine({ redis: server.url, keyPrefix: PREFIX, ...options });
      engines.push(engine);
      return engine;
    },
    worker(file, options = {}) {
      const worker = spawnWorker(path.join(__dirname, '..', 'workers', file), {
        ...options,
        env: { REDIS_URL: server.url, KEY_PREFIX: PREFIX, ...options.env },
      });
      workers.push(worker);
      return worker;
    },
    cleanup,
    async stop() {
      await cleanup();
      await closeClient(admin);
      await server.stop();
    },
  };
}

/** The Redis names of `key`'s lock of the given kind. */
export function lockNames(key: string, kind: LockKindTag): LockKeyNames {
  return new KeySpace(PREFIX).names(key, kind);
}

/** A key no other test uses. */
let seq = 0;
export function uniqueKey(label: string): string {
  seq += 1;
  return `${label}:${seq}:${Math.random().toString(36).slice(2, 8)}`;
}

/** Calls of each command the server executed so far (INFO commandstats; rejected and failed calls count). */
export async function commandCounts(port: number): Promise<Map<string, number>> {
  const stats = await redisInfo(port, 'commandstats');
  const counts = new Map<string, number>();
  for (const [field, value] of Object.entries(stats)) {
    if (!field.startsWith('cmdstat_')) continue;
    const total = ['calls', 'rejected_calls', 'failed_calls']
      .map((name) => Number(new RegExp(`(?:^|,)${name}=(\\d+)`).exec(value)?.[1] ?? 0))
      .reduce((a, b) => a + b, 0);
    counts.set(field.slice('cmdstat_'.length), total);
  }
  return counts;
}

/** Resolves with the signal's reason once it aborts (at once if it already has). */
export function whenAborted(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) =>
    signal.addEventListener('abort', () => resolve(signal.reason), { once: true }),
  );
}
