import { Injectable } from '@nestjs/common';
import { AppRedis } from '../redis/app-redis';

/** A stored quantity and the fencing token of the lock holder that wrote it last. */
export interface FencedRecord {
  sku: string;
  qty: number;
  /** Fencing token of the last accepted write (0: never written). */
  fence: number;
}

/** One write: the new quantity of `sku`, made by the holder of the lock whose token is `token`. */
export interface FencedWrite {
  sku: string;
  qty: number;
  token: number;
}

/** A write came with a token lower than one the store already accepted: its lock holder is stale. */
export class StaleFenceError extends Error {
  constructor(
    readonly sku: string,
    readonly token: number,
    readonly lastToken: number,
  ) {
    super(`Stale write to "${sku}" rejected: fencing token ${token} is below the last accepted ${lastToken}`);
    this.name = 'StaleFenceError';
  }
}

/*
 * The storage side of the Kleppmann pattern. A lease cannot stop a holder that pauses past it (GC,
 * SIGSTOP, a slow network) and then writes; only the storage can, by remembering the highest
 * fencing token it accepted and refusing anything lower. The check and the writes must be one
 * atomic step, hence a script. All entries are checked before any is written: all or nothing.
 *
 * KEYS[i]  record hash of entry i (fields qty, fence)
 * ARGV     qty1, token1, qty2, token2, ...
 * Returns  0 when every entry was written; {i, lastFence} for the first stale entry (nothing written).
 */
const FENCED_WRITE_LUA = `
for i, key in ipairs(KEYS) do
  local last = redis.call('HGET', key, 'fence')
  if last and tonumber(ARGV[2 * i]) < tonumber(last) then
    return {i, last}
  end
end
for i, key in ipairs(KEYS) do
  redis.call('HSET', key, 'qty', ARGV[2 * i - 1], 'fence', ARGV[2 * i])
end
return 0
`;

type FencedWriteCommand = (numKeys: number, ...args: string[]) => Promise<0 | [number, string]>;

/** Inventory records that only accept writes carrying a fencing token at least as high as the last one. */
@Injectable()
export class FencedStore {
  constructor(private readonly redis: AppRedis) {
    redis.client.defineCommand('sampleFencedWrite', { lua: FENCED_WRITE_LUA });
  }

  /** The record of `sku` (qty 0, fence 0 when it does not exist yet). */
  async read(sku: string): Promise<FencedRecord> {
    const [qty, fence] = await this.redis.client.hmget(this.recordKey(sku), 'qty', 'fence');
    return { sku, qty: Number(qty ?? 0), fence: Number(fence ?? 0) };
  }

  /** Writes every entry, or none: rejects with StaleFenceError if any token is below its record's fence. */
  async write(writes: readonly FencedWrite[]): Promise<FencedRecord[]> {
    const run = (this.redis.client as unknown as { sampleFencedWrite: FencedWriteCommand }).sampleFencedWrite;
    const args = writes.flatMap((w) => [String(w.qty), String(w.token)]);
    const keys = writes.map((w) => this.recordKey(w.sku));
    const reply = await run.call(this.redis.client, keys.length, ...keys, ...args);
    if (reply !== 0) {
      const stale = writes[reply[0] - 1];
      throw new StaleFenceError(stale.sku, stale.token, Number(reply[1]));
    }
    return writes.map((w) => ({ sku: w.sku, qty: w.qty, fence: w.token }));
  }

  private recordKey(sku: string): string {
    return this.redis.key(`inventory:${sku}`);
  }
}
