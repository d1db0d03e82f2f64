import { createHash } from 'node:crypto';
import { toFence, type Fence, type FenceSource } from '../fence';
import { StaleFenceError, type StoredFence } from '../stale-fence.error';
import { parseStoredToken } from '../sql/sql-dialect';
import type { FenceLedger } from '../http/fence-ledger';
import { LUA_SOURCES } from './lua-sources';

/** The commands the store sends: an ioredis client (Redis or Cluster) has them. */
export interface FencedStoreRedis {
  evalsha(sha: string, numKeys: number, ...args: string[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: string[]): Promise<unknown>;
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
}

/** Options of {@link RedisFencedStore}. */
export interface RedisFencedStoreOptions {
  /** Names the fence record of a data key; default `<key>:fence` (give keys a hash tag on a Cluster). */
  fenceKey?: (key: string) => string;
}

const SCRIPT = LUA_SOURCES['fenced-write.lua']!;
const SHA = createHash('sha1').update(SCRIPT).digest('hex');

/**
 * Fenced writes to Redis resources (SET, HSET, DEL) in one script each: the resource keeps the
 * (fence, owner) of its last accepted writer beside the data, and a write the rule refuses throws
 * StaleFenceError with nothing written. Keep it on a Redis the lock's faults do not reach (or one
 * with persistence): a fence lost with the data accepts any token again.
 */
export class RedisFencedStore implements FenceLedger {
  private readonly fenceKey: (key: string) => string;

  constructor(
    private readonly redis: FencedStoreRedis,
    options: RedisFencedStoreOptions = {},
  ) {
    this.fenceKey = options.fenceKey ?? ((key) => `${key}:fence`);
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
    const [token, owner] = await this.redis.hmget(this.fenceKey(assertKey(key)), 'fence', 'owner');
    return token === null || token === undefined
      ? null
      : { token: parseStoredToken(token), owner: owner ?? '' };
  }

  private async write(key: string, source: FenceSource, operation: string[]): Promise<void> {
    assertKey(key);
    const fence: Fence = toFence(source);
    const args = [key, this.fenceKey(key), String(fence.token), fence.owner, ...operation];
    const reply = (await this.run(args)) as [number, string?, string?];
    if (reply[0] === 1) return;
    throw new StaleFenceError(fence.key, fence, { token: parseStoredToken(reply[1]), owner: reply[2] ?? '' });
  }

  private async run(args: string[]): Promise<unknown> {
    try {
      return await this.redis.evalsha(SHA, 2, ...args);
    } catch (error) {
      // The script cache is empty after a restart or SCRIPT FLUSH: send the script once.
      if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
      return this.redis.eval(SCRIPT, 2, ...args);
    }
  }
}

function assertKey(key: unknown): string {
  if (typeof key !== 'string' || key === '') throw new TypeError('key must be a non-empty string');
  return key;
}
