import Redis from 'ioredis';

/*
 * The fencing oracle: a stand-in for the storage a lock protects, kept on a SEPARATE redis-server
 * so that faults injected into the lock's Redis (pause, restart, flush) cannot touch it. A write
 * carries the writer's fencing token and is accepted only if that token is greater than every
 * token accepted before (Kleppmann's "storage checks the token"). The occupancy counter is the
 * external overlap detector: a critical section that enters while another is inside sees > 1.
 */

// KEYS[1] resource hash   ARGV[1] fencing token   ARGV[2] writer name
// Returns 1 accepted (token stored), 0 rejected as stale (counted in field `rejected`).
const FENCED_WRITE = `
local last = tonumber(redis.call('HGET', KEYS[1], 'token') or '0')
if tonumber(ARGV[1]) <= last then
  redis.call('HINCRBY', KEYS[1], 'rejected', 1)
  return 0
end
redis.call('HSET', KEYS[1], 'token', ARGV[1], 'writer', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'accepted', 1)
return 1
`;

// KEYS[1] occupancy counter   KEYS[2] resource hash
// Returns how many critical sections are inside after this one entered; keeps the maximum seen.
const ENTER_SECTION = `
local inside = redis.call('INCR', KEYS[1])
if inside > tonumber(redis.call('HGET', KEYS[2], 'maxOccupancy') or '0') then
  redis.call('HSET', KEYS[2], 'maxOccupancy', inside)
end
return inside
`;

/** Counts of one resource in the store. */
export interface ResourceState {
  token: number;
  writer: string | null;
  accepted: number;
  rejected: number;
  maxOccupancy: number;
}

/** Client of the fencing oracle (usable from the test process and from workers). */
export class FencedStore {
  readonly client: Redis;

  constructor(url: string) {
    this.client = new Redis(url, { maxRetriesPerRequest: 1 });
    this.client.defineCommand('fencedWrite', { numberOfKeys: 1, lua: FENCED_WRITE });
    this.client.defineCommand('enterSection', { numberOfKeys: 2, lua: ENTER_SECTION });
  }

  /** Writes to `resource` with `token`; true when the store accepted it, false when it was stale. */
  async write(resource: string, token: number, writer: string): Promise<boolean> {
    const reply = await (this.client as any).fencedWrite(`res:${resource}`, String(token), writer);
    return reply === 1;
  }

  /** Enters the critical section of `resource`; returns how many are inside now (1 unless overlapping). */
  async enter(resource: string): Promise<number> {
    return Number(await (this.client as any).enterSection(`occ:${resource}`, `res:${resource}`));
  }

  /** Leaves the critical section of `resource`. */
  async exit(resource: string): Promise<void> {
    await this.client.decr(`occ:${resource}`);
  }

  /** What the store saw for `resource`. */
  async state(resource: string): Promise<ResourceState> {
    const h = await this.client.hgetall(`res:${resource}`);
    return {
      token: Number(h.token ?? 0),
      writer: h.writer ?? null,
      accepted: Number(h.accepted ?? 0),
      rejected: Number(h.rejected ?? 0),
      maxOccupancy: Number(h.maxOccupancy ?? 0),
    };
  }

  /** Closes the connection (QUIT, then disconnect if the server is gone). */
  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
