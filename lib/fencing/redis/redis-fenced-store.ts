// Past the core's public surface: the store runs its script the core's one way (RedisGateway: EVALSHA,
// EVAL once after NOSCRIPT, a deadline per call, Redis errors as LockRedisError), on any of the four
// client families the lock engine takes.
import { LockRedisError } from '../../core/public';
import {
  doorForClient,
  nodeRuntime,
  RedisGateway,
  scriptOf,
  toLockRedisError,
  type RedisClient,
} from '../../core/internal';
import { toFence, type Fence, type FenceSource } from '../fence';
import { StaleFenceError, type StoredFence } from '../stale-fence.error';
import { parseStoredToken } from '../sql/sql-dialect';
import type { FenceLedger } from '../http/fence-ledger';
import { LUA_SOURCES } from './lua-sources';

/**
 * The client the store sends its commands on: an ioredis or iovalkey client (Redis or Cluster), a
 * node-redis client, or a Valkey GLIDE client, as the lock engine takes them.
 */
export type FencedStoreRedis = RedisClient;

/** Options of {@link RedisFencedStore}. */
export interface RedisFencedStoreOptions {
  /** Names the fence record of a data key; default `<key>:fence` (give keys a hash tag on a Cluster). */
  fenceKey?: (key: string) => string;
  /** A write or read that Redis has not answered within this many ms fails with LockRedisError; default 5000. */
  commandTimeoutMs?: number;
}

/** reply: [1] written; [0, stored fence, stored owner] refused. */
const FENCED_WRITE = scriptOf<string[], [number, string?, string?]>(
  'fenced-write',
  LUA_SOURCES['fenced-write.lua']!,
);

/**
 * Fenced writes to Redis resources (SET, HSET, DEL) in one script each: the resource keeps the
 * (fence, owner) of its last accepted writer beside the data, and a write the rule refuses throws
 * StaleFenceError with nothing written. Keep it on a Redis the lock's faults do not reach (or one
 * with persistence): a fence lost with the data accepts any token again.
 */
export class RedisFencedStore implements FenceLedger {
  private readonly fenceKey: (key: string) => string;
  private readonly gateway: RedisGateway;
  private readonly timeoutMs: number;

  constructor(redis: FencedStoreRedis, options: RedisFencedStoreOptions = {}) {
    const timeoutMs = options.commandTimeoutMs ?? 5_000;
    if (!(Number.isSafeInteger(timeoutMs) && timeoutMs > 0)) {
      throw new RangeError(`commandTimeoutMs must be a positive integer, got ${String(timeoutMs)}`);
    }
    this.fenceKey = options.fenceKey ?? ((key) => `${key}:fence`);
    this.timeoutMs = timeoutMs;
    // Commands only: the store adds no listener to the client (it has no close() to remove one).
    this.gateway = new RedisGateway(doorForClient(redis, true), timeoutMs, nodeRuntime);
  }

  /** SET `key` to `value` (with a PX expiry when `pxMs` is given) if the fence admits the write. */
  async set(key: string, value: string, fence: FenceSource, options: { pxMs?: number } = {}): Promise<void> {
    const px = options.pxMs;
    if (px !== undefined && !(Number.isSafeInteger(px) && px > 0)) {
      throw new RangeError(`pxMs must be a positive integer, got ${String(px)}`);
    }
    await this.write(key, fence, ['set', String(value), ...(px === undefined ? [] : [String(px)])]);
  }

  /** HSET the `fields` of hash `key` if the fence admits the write. */
  async hset(key: string, fields: Record<string, string | number>, fence: FenceSource): Promise<void> {
    const pairs = Object.entries(fields ?? {}).flatMap(([field, value]) => [field, String(value)]);
    if (pairs.length === 0) throw new TypeError('hset needs at least one field');
    await this.write(key, fence, ['hset', ...pairs]);
  }

  /** DEL `key` if the fence admits the write (the fence record stays, so older holders stay refused). */
  async del(key: string, fence: FenceSource): Promise<void> {
    await this.write(key, fence, ['del']);
  }

  /**
   * Records the fence without writing data: claims the resource for this grant, so that writes of
   * older grants are refused from now on. Claim before reading, then read, then write.
   */
  async admit(key: string, fence: FenceSource): Promise<void> {
    await this.write(key, fence, ['claim']);
  }

  /** The (fence, owner) of the last accepted writer of `key`; null when none wrote with a fence. */
  async storedFence(key: string): Promise<StoredFence | null> {
    const record = this.fenceKey(assertKey(key));
    const [token, owner] = (await this.gateway
      .ask(
        (door) => door.command(['HMGET', record, 'fence', 'owner'], record),
        this.timeoutMs,
        () => new LockRedisError(`Redis did not answer storedFence within ${this.timeoutMs} ms`),
      )
      .catch((err: unknown) => {
        throw toLockRedisError(err, 'storedFence');
      })) as (string | null)[];
    return token === null || token === undefined
      ? null
      : { token: parseStoredToken(token), owner: owner ?? '' };
  }

  private async write(key: string, source: FenceSource, operation: string[]): Promise<void> {
    assertKey(key);
    const fence: Fence = toFence(source);
    const reply = await this.gateway.run(
      FENCED_WRITE,
      [key, this.fenceKey(key)],
      [String(fence.token), fence.owner, ...operation],
    );
    if (reply[0] === 1) return;
    throw new StaleFenceError(fence.key, fence, { token: parseStoredToken(reply[1]), owner: reply[2] ?? '' });
  }
}

function assertKey(key: unknown): string {
  if (typeof key !== 'string' || key === '') throw new TypeError('key must be a non-empty string');
  return key;
}
