/*
 * The two sides of the script seam: the RedisGateway running the Lua scripts on a real redis-server,
 * and MemoryScripts running their TypeScript ports (lib/testing/memory/scripts) over a MemoryStore.
 * TwinRunner sends every script call of a step to both, with the same KEYS and ARGV, and records
 * both raw replies; each side reads the state of its keys and the messages it published into one
 * common shape.
 */
import { RedisGateway, type ScriptCall, type ScriptRunner } from '../../../lib/core/redis/redis-gateway';
import type { LuaScript, ScriptArg } from '../../../lib/core/redis/script-library';
import { nodeRuntime, type Runtime } from '../../../lib/core/runtime/runtime';
import { MemoryScripts } from '../../../lib/testing/memory/memory-scripts';
import { MemoryStore } from '../../../lib/testing/memory/memory-store';
import { closeClient, redisClient } from '../../support/redis-assertions';
import { Approx, Normalised, normaliseNumber, normaliseText } from './normalise';

/** Settings the kinds above the seam are built with. */
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

/** One side of the seam: its script runner, and what a step reads from its keyspace. */
export interface SeamSide {
  readonly name: 'redis' | 'memory';
  readonly runner: ScriptRunner;
  /** Writes `fixture` at the Redis key `key` (replacing what was there). */
  seed(key: string, fixture: Fixture): Promise<void>;
  /** Every live key under `prefix`: type, TTL ('none' or ms left) and content, normalised. */
  state(prefix: string): Promise<Record<string, Normalised>>;
  /** The messages published since the last call, in order. */
  published(): Promise<[channel: string, message: string][]>;
  /** The side's server clock in ms (for normalising replies). */
  nowMs(): Promise<number>;
  /** Calls `send` so that its reply comes about `ms` late (Redis paused; the memory backend's reply held). */
  late<T>(send: () => Promise<T>, ms: number): Promise<T>;
  close(): Promise<void>;
}

/** One script call of a step: what both sides were sent, and each side's raw reply (or error). */
export interface SeamCall {
  script: string;
  keys: readonly string[];
  args: readonly ScriptArg[];
  replies: Record<SeamSide['name'], unknown>;
}

/**
 * The ScriptRunner the kinds of the spec run on: every call goes to Redis, then to memory, with the
 * same KEYS and ARGV; the kinds go on with Redis' reply (the reference).
 */
export class TwinRunner implements ScriptRunner {
  readonly publishCommand = 'PUBLISH';
  readonly cluster = false;
  /** Both sides store keys as named: the kinds send the short forms the scripts allow then. */
  readonly keysVerbatim = true;
  /** The calls since the last drain(). */
  private calls: SeamCall[] = [];

  constructor(
    private readonly redis: SeamSide,
    private readonly memory: SeamSide,
  ) {}

  async run<Args extends readonly ScriptArg[], Reply>(
    script: LuaScript<Args, Reply>,
    keys: readonly string[],
    args: Args,
    call?: ScriptCall<Reply>,
  ): Promise<Reply> {
    const settle = (reply: Promise<Reply>) =>
      reply.then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      );
    const onRedis = await settle(this.redis.runner.run(script, keys, args, call));
    const onMemory = await settle(this.memory.runner.run(script, keys, args, call));
    const raw = (o: typeof onRedis): unknown => (o.ok ? o.value : o.error);
    this.calls.push({
      script: script.name,
      keys,
      args,
      replies: { redis: raw(onRedis), memory: raw(onMemory) },
    });
    if (!onRedis.ok) throw onRedis.error;
    return onRedis.value;
  }

  /** The calls since the last drain. */
  drain(): SeamCall[] {
    return this.calls.splice(0);
  }
}

/** The Redis side: a RedisGateway of its own, plus a subscriber on `channels`. */
export async function redisSide(url: string, channels: string): Promise<SeamSide> {
  const client = redisClient(url);
  const admin = redisClient(url);
  const subscriber = redisClient(url);
  const gateway = new RedisGateway(client, CONFORMANCE_SETTINGS.commandTimeoutMs, nodeRuntime);
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
    runner: gateway,
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
    async published() {
      // Messages of one server reach a subscriber in order: once this one is in, all earlier ones are.
      const n = String(++flushes);
      const flushed = new Promise<void>((resolve) => {
        onFlush = (m) => m === n && resolve();
      });
      await admin.publish(flushChannel, n);
      await flushed;
      return published.splice(0);
    },
    nowMs,
    async late(send, ms) {
      await admin.call('CLIENT', 'PAUSE', String(ms), 'WRITE');
      return send();
    },
    async close() {
      await Promise.all([closeClient(client), closeClient(admin), closeClient(subscriber)]);
    },
  };
}

/** The in-memory side: MemoryScripts on a store of its own, with a publish listener. */
export function memorySide(): SeamSide {
  const store = new MemoryStore();
  const published: [string, string][] = [];
  const stop = store.onPublish((channel, message) => published.push([channel, message]));
  const nowMs = (): number => Math.floor(store.nowMs());
  // The backend's reply turn, held back for the next reply only (late), as CLIENT PAUSE holds Redis'.
  let holdNextReplyMs = 0;
  const runtime: Runtime = {
    ...nodeRuntime,
    nextTurn() {
      const ms = holdNextReplyMs;
      holdNextReplyMs = 0;
      return ms > 0 ? new Promise<void>((resolve) => setTimeout(resolve, ms)) : nodeRuntime.nextTurn();
    },
  };
  return {
    name: 'memory',
    runner: new MemoryScripts(store, CONFORMANCE_SETTINGS.commandTimeoutMs, runtime),
    seed(key, fixture) {
      store.del(key);
      if (fixture.type === 'string') store.set(key, fixture.value);
      if (fixture.type === 'hash') store.hset(key, ...Object.entries(fixture.fields).flat());
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
        if (type === 'string') value = normaliseText(store.get(key)!, now);
        if (type === 'hash') value = normaliseFields(store.hgetall(key), now);
        if (type === 'list') value = store.lrange(key);
        if (type === 'zset') value = store.zrange(key).map(([m, s]) => [m, normaliseNumber(s, now)]);
        if (type !== 'none') out[key] = { type, ttl: ttlOf(store.pttl(key)), value };
      }
      return Promise.resolve(out);
    },
    published: () => Promise.resolve(published.splice(0)),
    nowMs: () => Promise.resolve(nowMs()),
    late(send, ms) {
      // The script runs at once; its reply comes `ms` later. (An event loop held up instead would not
      // make it late: a reply ready in time is taken before the deadline is judged, as on Redis.)
      holdNextReplyMs = ms;
      return send();
    },
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
