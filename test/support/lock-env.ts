/*
 * The one set-up of the engine specs (core, family, multi, observability, testing): one real
 * redis-server per spec file, an admin client for assertions, engines, clients and workers that are
 * always closed, and small probes (commands sent, hold counts, signal aborts, events) that never
 * look at the clock. `useLockEnv()` registers the hooks; `startLockEnv()` is the same without them.
 */
import Redis, { RedisOptions } from 'ioredis';
import { createLockEngine, CreateLockEngineOptions } from '../../lib/core/public';
import { LockEngine } from '../../lib/core/engine/lock-engine';
import type { LockEventMap } from '../../lib/core/events/lock-event-map';
import { closeClient, redisClient } from './redis-assertions';
import { commandCounts } from './redis-command';
export { commandCounts } from './redis-command';
import { startRedis, RedisServerProcess } from './redis-server';
import { spawnWorker, SpawnWorkerOptions, workerPath, WorkerProcess } from './spawn-worker';

/** How a spec file's engines and workers are built. */
export interface LockEnvOptions {
  /** Key prefix of every engine (unless a call gives its own) and KEY_PREFIX of every worker. */
  keyPrefix?: string;
}

/** One redis-server for a spec file, its admin client, and what the tests built on it. */
export interface LockEnv {
  server: RedisServerProcess;
  url: string;
  /** A plain client for assertions (used by no engine). */
  admin: Redis;
  /** Builds an engine on this server (URL unless `redis` is given, the env's keyPrefix unless given); closed by `cleanup()`. */
  engine(options?: Partial<CreateLockEngineOptions>): LockEngine;
  /** A plain client for a test; closed by `cleanup()`. */
  client(options?: RedisOptions): Redis;
  /** Spawns a worker of test/support/workers with REDIS_URL (and KEY_PREFIX) set; stopped by `cleanup()`. */
  worker<M = any>(file: string, options?: SpawnWorkerOptions): WorkerProcess<M>;
  /** Stops every worker, closes every engine and client made since the last call (after each test). */
  cleanup(): Promise<void>;
  /** Stops everything (after all tests). */
  stop(): Promise<void>;
}

/** Starts a redis-server and returns the helpers bound to it. */
export async function startLockEnv(options: LockEnvOptions = {}): Promise<LockEnv> {
  const { keyPrefix } = options;
  const server = await startRedis();
  const admin = redisClient(server.url);
  let engines: LockEngine[] = [];
  let clients: Redis[] = [];
  let workers: WorkerProcess[] = [];
  const cleanup = async (): Promise<void> => {
    const [e, c, w] = [engines, clients, workers];
    engines = [];
    clients = [];
    workers = [];
    await Promise.all(w.map((worker) => worker.stop()));
    await Promise.all(e.map((engine) => engine.close()));
    await Promise.all(c.map((client) => closeClient(client)));
  };
  return {
    server,
    url: server.url,
    admin,
    engine(engineOptions = {}) {
      const prefix = keyPrefix === undefined ? {} : { keyPrefix };
      const engine = createLockEngine({ redis: server.url, ...prefix, ...engineOptions });
      engines.push(engine);
      return engine;
    },
    client(clientOptions: RedisOptions = {}) {
      const client = redisClient(server.url, clientOptions);
      clients.push(client);
      return client;
    },
    worker(file, workerOptions = {}) {
      const prefix = keyPrefix === undefined ? {} : { KEY_PREFIX: keyPrefix };
      const worker = spawnWorker(workerPath(file), {
        ...workerOptions,
        env: { REDIS_URL: server.url, ...prefix, ...workerOptions.env },
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

/**
 * Registers the hooks of a spec file: start in beforeAll, `cleanup()` in afterEach (unless
 * `cleanupAfterEach: false`, for files that build what every test shares in their own beforeAll),
 * `stop()` in afterAll. Returns the env; its members may be used only while the file's tests run.
 */
export function useLockEnv(options: LockEnvOptions & { cleanupAfterEach?: boolean } = {}): LockEnv {
  let current: LockEnv | undefined;
  const env = (): LockEnv => {
    if (!current) throw new Error('the lock env is used outside the tests of its spec file');
    return current;
  };
  beforeAll(async () => {
    current = await startLockEnv(options);
  });
  if (options.cleanupAfterEach !== false) {
    afterEach(async () => {
      await current?.cleanup();
    });
  }
  afterAll(async () => {
    await current?.stop();
    current = undefined;
  });
  return {
    get server() {
      return env().server;
    },
    get url() {
      return env().url;
    },
    get admin() {
      return env().admin;
    },
    engine: (engineOptions) => env().engine(engineOptions),
    client: (clientOptions) => env().client(clientOptions),
    worker: (file, workerOptions) => env().worker(file, workerOptions),
    cleanup: () => env().cleanup(),
    stop: () => env().stop(),
  };
}

/** A key no other test uses (tests share a server but never a key). */
let seq = 0;
export function uniqueKey(label: string): string {
  seq += 1;
  return `${label}:${process.pid}:${seq}:${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * Every command the server received while `action` ran (INFO excluded), as name → count. Counting
 * starts once the server has been quiet for 50 ms (at most 2 s of waiting): what earlier calls set off
 * in the background (an engine subscribing its force-release notices after its first lock call) is
 * not counted as the action's.
 */
export async function commandsDuring(
  port: number,
  action: () => Promise<unknown>,
  /** `settle: false`: count at once (a spec that counts the INFO probes' connections too). */
  { settle = true }: { settle?: boolean } = {},
): Promise<Record<string, number>> {
  let before = await commandCounts(port);
  for (let waited = 0; settle && waited < 2000; waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = await commandCounts(port);
    const quiet = now.size === before.size && [...now].every(([name, count]) => before.get(name) === count);
    before = now;
    if (quiet) break;
  }
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

/**
 * What Redis keeps of a reentrant mutex, from either form (mutex-acquire.lua): one hold is the string
 * '<owner> <hold id> <token>[ w]', more holds the hash { owner, fence, n, <hold id> = 1 ..., w }.
 * Holds are the hold fields (checked against `n`); null when the key is absent.
 */
export async function mutexState(
  admin: Redis,
  lockName: string,
): Promise<{ owner: string; fence: string; holds: number; marked: boolean } | null> {
  const type = await admin.type(lockName);
  if (type === 'string') {
    const value = (await admin.get(lockName)) ?? '';
    const single = /^(\S+) (\S+) (\d+)( w)?$/.exec(value);
    if (!single) throw new Error(`${lockName}: a string that is not a mutex of one hold: ${value}`);
    return { owner: single[1]!, fence: single[3]!, holds: 1, marked: single[4] !== undefined };
  }
  if (type !== 'hash') return null;
  const hash = await admin.hgetall(lockName);
  const holds = Object.keys(hash).filter((f) => !['owner', 'fence', 'n', 'w'].includes(f)).length;
  // The mutex counts its holds in `n` (the fair lock's holder does not): the count and the fields agree.
  if (hash.n !== undefined && Number(hash.n) !== holds) {
    throw new Error(`${lockName}: n = ${hash.n} but ${holds} hold fields (${JSON.stringify(hash)})`);
  }
  return { owner: hash.owner ?? '', fence: hash.fence ?? '', holds, marked: hash.w !== undefined };
}

/** Number of holds of a reentrant mutex (or the fair lock's holder); 0 when absent. */
export async function holdCount(admin: Redis, lockName: string): Promise<number> {
  return (await mutexState(admin, lockName))?.holds ?? 0;
}

/** The fencing token a reentrant mutex's holder got, as Redis keeps it; null when absent. */
export async function mutexFence(admin: Redis, lockName: string): Promise<string | null> {
  return (await mutexState(admin, lockName))?.fence ?? null;
}

/** A lock key's type and contents (GET or HGETALL), to compare before and after. */
export async function keySnapshot(admin: Redis, name: string): Promise<{ type: string; value: unknown }> {
  const type = await admin.type(name);
  const value =
    type === 'hash' ? await admin.hgetall(name) : type === 'string' ? await admin.get(name) : null;
  return { type, value };
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
