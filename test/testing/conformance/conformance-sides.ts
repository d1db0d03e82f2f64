/*
 * The two sides of the conformance spec: the Redis kinds (lib/core/kinds, running the Lua scripts on
 * a real redis-server) and the in-memory kinds (lib/testing/memory/kinds), built with the same
 * settings. Each side records the raw script replies and the pub/sub messages of every step and
 * reads the state of a lock's keys into one common shape.
 */
import { FairLock } from '../../../lib/core/kinds/fair-lock';
import type { LockKinds } from '../../../lib/core/kinds/kind-registry';
import { ReadWriteLock } from '../../../lib/core/kinds/read-write-lock';
import { ReentrantMutex } from '../../../lib/core/kinds/reentrant-mutex';
import { Semaphore } from '../../../lib/core/kinds/semaphore';
import { TokenLock } from '../../../lib/core/kinds/token-lock';
import { RedisGateway, type ScriptCall } from '../../../lib/core/redis/redis-gateway';
import type { LuaScript, ScriptArg } from '../../../lib/core/redis/script-library';
import { MemoryFairLock } from '../../../lib/testing/memory/kinds/memory-fair-lock';
import { MemoryMutex } from '../../../lib/testing/memory/kinds/memory-mutex';
import { MemoryReadWriteLock } from '../../../lib/testing/memory/kinds/memory-read-write-lock';
import { MemorySemaphore } from '../../../lib/testing/memory/kinds/memory-semaphore';
import { MemoryTokenLock } from '../../../lib/testing/memory/kinds/memory-token-lock';
import { MemoryCommands } from '../../../lib/testing/memory/memory-commands';
import { MemoryStore } from '../../../lib/testing/memory/memory-store';
import { closeClient, redisClient } from '../../support/redis-assertions';
import { Approx, Normalised, normaliseNumber, normaliseReply, normaliseText } from './normalise';

/** Settings both sides' kinds are built with. */
export const CONFORMANCE_SETTINGS = {
  fenceTtlMs: 86_400_000,
  /**
   * Fair-queue places, writer markers and permit reservations: short, so a scenario can outlive one,
   * yet long enough that a loaded machine does not expire a place a scenario needs alive.
   */
  waiterTtlMs: 4000,
  commandTimeoutMs: 10_000,
};

/** Data a scenario puts at a key before its steps (app data of another type, a seeded counter). */
export type Fixture =
  | { type: 'string'; value: string; ttlMs?: number }
  | { type: 'hash'; fields: Record<string, string>; ttlMs?: number }
  | { type: 'zset'; members: [member: string, score: number][]; ttlMs?: number }
  | { type: 'list'; items: string[]; ttlMs?: number };

/** What one step did besides its reply: the scripts it ran (raw replies) and what it published. */
export interface StepTrace {
  scripts: [script: string, reply: Normalised][];
  published: [channel: string, message: string][];
}

/** One backend under comparison. */
export interface ConformanceSide {
  readonly name: 'redis' | 'memory';
  readonly kinds: Required<LockKinds>;
  /** Writes `fixture` at the Redis key `key` (replacing what was there). */
  seed(key: string, fixture: Fixture): Promise<void>;
  /** Every live key under `prefix`: type, TTL ('none' or ms left) and content, normalised. */
  state(prefix: string): Promise<Record<string, Normalised>>;
  /** The scripts run and the messages published since the last call. */
  drain(): Promise<StepTrace>;
  /** The side's server clock in ms (for normalising replies). */
  nowMs(): Promise<number>;
  close(): Promise<void>;
}

/** Records every script reply of the Redis kinds (the gateway is theirs; nothing else changes). */
class RecordingGateway extends RedisGateway {
  readonly replies: [string, unknown][] = [];

  override async run<Args extends readonly ScriptArg[], Reply>(
    script: LuaScript<Args, Reply>,
    keys: string[],
    args: Args,
    call?: ScriptCall<Reply>,
  ): Promise<Reply> {
    try {
      const reply = await super.run(script, keys, args, call);
      this.replies.push([script.name, reply]);
      return reply;
    } catch (err) {
      this.replies.push([script.name, err instanceof Error && err.cause instanceof Error ? err.cause : err]);
      throw err;
    }
  }
}

/** The Redis side: the production kinds on their own gateway, plus a subscriber on `channels`. */
export async function redisSide(url: string, channels: string): Promise<ConformanceSide> {
  const { fenceTtlMs, waiterTtlMs, commandTimeoutMs } = CONFORMANCE_SETTINGS;
  const client = redisClient(url);
  const admin = redisClient(url);
  const subscriber = redisClient(url);
  const gateway = new RecordingGateway(client, commandTimeoutMs);
  const published: [string, string][] = [];
  const flushChannel = 'conformance:flush';
  let flushes = 0;
  let onFlush: ((n: string) => void) | undefined;
  subscriber.on('pmessage', (_pattern: string, channel: string, message: string) => {
    published.push([channel, message]);
  });
  subscriber.on('message', (channel: string, message: string) => {
    if (channel === flushChannel) onFlush?.(message);
  });
  await subscriber.psubscribe(channels);
  await subscriber.subscribe(flushChannel);
  const nowMs = async (): Promise<number> => {
    const [s, us] = await admin.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  };
  return {
    name: 'redis',
    kinds: {
      mutex: new ReentrantMutex(gateway, fenceTtlMs),
      token: new TokenLock(gateway, fenceTtlMs),
      readWrite: new ReadWriteLock(gateway, fenceTtlMs, waiterTtlMs),
      fair: new FairLock(gateway, fenceTtlMs, waiterTtlMs),
      semaphore: new Semaphore(gateway, fenceTtlMs, waiterTtlMs),
    },
    async seed(key, fixture) {
      await admin.del(key);
      if (fixture.type === 'string') await admin.set(key, fixture.value);
      if (fixture.type === 'hash') await admin.hset(key, fixture.fields);
      if (fixture.type === 'zset')
        await admin.zadd(key, ...fixture.members.flatMap(([m, s]) => [String(s), m]));
      if (fixture.type === 'list') await admin.rpush(key, ...fixture.items);
      if (fixture.ttlMs !== undefined) await admin.pexpire(key, fixture.ttlMs);
    },
    async state(prefix) {
      const now = await nowMs();
      const out: Record<string, Normalised> = {};
      for (const key of (await admin.keys(`${prefix}*`)).sort()) {
        const type = await admin.type(key);
        const pttl = await admin.pttl(key);
        let value: Normalised = null;
        if (type === 'string') value = normaliseText((await admin.get(key)) ?? '', now);
        if (type === 'hash') value = normaliseFields(Object.entries(await admin.hgetall(key)), now);
        if (type === 'list') value = await admin.lrange(key, 0, -1);
        if (type === 'zset') {
          const flat = await admin.zrange(key, '0', '-1', 'WITHSCORES');
          const members: Normalised[] = [];
          for (let i = 0; i < flat.length; i += 2)
            members.push([flat[i]!, normaliseNumber(Number(flat[i + 1]), now)]);
          value = members;
        }
        if (type !== 'none') out[key] = { type, ttl: ttlOf(pttl), value };
      }
      return out;
    },
    async drain() {
      // Messages of one server reach a subscriber in order: once this one is in, all earlier ones are.
      const n = String(++flushes);
      const flushed = new Promise<void>((resolve) => {
        onFlush = (m) => m === n && resolve();
      });
      await admin.publish(flushChannel, n);
      await flushed;
      const now = await nowMs();
      const scripts = gateway.replies
        .splice(0)
        .map(([s, r]): [string, Normalised] => [s, normaliseReply(r, now)]);
      return { scripts, published: published.splice(0) };
    },
    nowMs,
    async close() {
      await Promise.all([closeClient(client), closeClient(admin), closeClient(subscriber)]);
    },
  };
}

/** The in-memory side: the in-memory kinds on one store, with its reply observer and publish listener. */
export function memorySide(): ConformanceSide {
  const { fenceTtlMs, waiterTtlMs } = CONFORMANCE_SETTINGS;
  const store = new MemoryStore();
  const commands = new MemoryCommands(store, fenceTtlMs);
  const replies: [string, unknown][] = [];
  const published: [string, string][] = [];
  commands.observer = (script, reply) => replies.push([script, reply]);
  const stop = store.onPublish((channel, message) => published.push([channel, message]));
  const nowMs = (): number => Math.floor(store.nowMs());
  return {
    name: 'memory',
    kinds: {
      mutex: new MemoryMutex(commands),
      token: new MemoryTokenLock(commands),
      readWrite: new MemoryReadWriteLock(commands, waiterTtlMs),
      fair: new MemoryFairLock(commands, waiterTtlMs),
      semaphore: new MemorySemaphore(commands, waiterTtlMs),
    },
    seed(key, fixture) {
      store.del(key);
      if (fixture.type === 'string') store.setString(key, fixture.value);
      if (fixture.type === 'hash') store.hset(key, fixture.fields);
      if (fixture.type === 'zset') for (const [m, s] of fixture.members) store.zadd(key, s, m);
      if (fixture.type === 'list') store.rpush(key, ...fixture.items);
      if (fixture.ttlMs !== undefined) store.pexpire(key, fixture.ttlMs);
      return Promise.resolve();
    },
    state(prefix) {
      const now = nowMs();
      const out: Record<string, Normalised> = {};
      for (const key of store
        .keys()
        .filter((k) => k.startsWith(prefix))
        .sort()) {
        const type = store.type(key);
        let value: Normalised = null;
        if (type === 'string') value = normaliseText(store.getString(key)!, now);
        if (type === 'hash') value = normaliseFields([...store.hash(key)!], now);
        if (type === 'list') value = [...store.list(key)!];
        if (type === 'zset') value = store.zrange(key).map(([m, s]) => [m, normaliseNumber(s, now)]);
        if (type !== 'none') out[key] = { type, ttl: ttlOf(store.pttl(key)), value };
      }
      return Promise.resolve(out);
    },
    drain() {
      const now = nowMs();
      const scripts = replies.splice(0).map(([s, r]): [string, Normalised] => [s, normaliseReply(r, now)]);
      return Promise.resolve({ scripts, published: published.splice(0) });
    },
    nowMs: () => Promise.resolve(nowMs()),
    close() {
      stop();
      return Promise.resolve();
    },
  };
}

function normaliseFields(entries: [string, string][], now: number): Normalised {
  const sorted = entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(sorted.map(([f, v]) => [f, normaliseText(v, now)]));
}

function ttlOf(pttl: number): Normalised {
  return pttl === -1 ? 'none' : new Approx(pttl);
}
