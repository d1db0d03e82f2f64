/*
 * The fencing oracle: a stand-in for the storage a lock protects (Kleppmann's "the storage checks the
 * token"), usable from the test process and from worker processes. The fault and topology specs keep it
 * on a SEPARATE redis-server, so that faults injected into the lock's Redis (pause, restart, flush,
 * failover) cannot touch it; the console spec keeps it on the lock's own Cluster. Per resource:
 *
 *   write(resource, token, writer)  accepted only if `token` is greater than every token accepted
 *                                   before; a stale writer is refused and counted
 *   enter(resource, token, holder)  the external overlap detector: a critical section that enters while
 *   exit(resource, holder)          another is inside is an overlap; a token not greater than every
 *                                   token that entered before is a regression; the most inside at
 *                                   once is kept
 *
 * Each operation is one Lua script, so the counts are exact across any number of OS processes. Keys
 * share a hash tag per resource (one slot on a Cluster) and expire after 10 minutes.
 */
import Redis, { type Cluster } from 'ioredis';

// KEYS[1] state hash   ARGV[1] token   ARGV[2] writer
// Returns {1, token} accepted, {0, last accepted token} refused as stale.
const WRITE = `
-- (Tokens are returned as the strings stored: Lua's tostring() would round a 16-digit token.)
local last = redis.call('HGET', KEYS[1], 'token') or '0'
redis.call('PEXPIRE', KEYS[1], 600000)
if tonumber(ARGV[1]) <= tonumber(last) then
  redis.call('HINCRBY', KEYS[1], 'rejected', 1)
  return {0, last}
end
redis.call('HSET', KEYS[1], 'token', ARGV[1], 'writer', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'accepted', 1)
return {1, ARGV[1]}`;

// KEYS[1] state hash   KEYS[2] set of the holders inside   ARGV[1] token   ARGV[2] holder
// Returns how many are inside once this holder entered (1 unless sections overlap).
const ENTER = `
local state = KEYS[1]
redis.call('HINCRBY', state, 'entries', 1)
local last = tonumber(redis.call('HGET', state, 'entered') or '0')
if tonumber(ARGV[1]) <= last then
  redis.call('HINCRBY', state, 'regressions', 1)
else
  redis.call('HSET', state, 'entered', ARGV[1])
end
redis.call('SADD', KEYS[2], ARGV[2])
local inside = redis.call('SCARD', KEYS[2])
if inside > 1 then redis.call('HINCRBY', state, 'overlaps', 1) end
if inside > tonumber(redis.call('HGET', state, 'maxOccupancy') or '0') then
  redis.call('HSET', state, 'maxOccupancy', inside)
end
redis.call('PEXPIRE', state, 600000)
redis.call('PEXPIRE', KEYS[2], 600000)
return inside`;

/** What one write got: accepted or not, and the last token the resource accepted. */
export interface FencedWrite {
  accepted: boolean;
  last: number;
}

/** What the oracle saw for one resource. */
export interface ResourceState {
  /** The last accepted write: its token and writer. */
  token: number;
  writer: string | null;
  accepted: number;
  /** Writes refused as stale. */
  rejected: number;
  /** Critical sections entered, entered while another was inside, and entered with a token not above every earlier one. */
  entries: number;
  overlaps: number;
  regressions: number;
  /** Most critical sections inside at once. */
  maxOccupancy: number;
}

/** A connection to the oracle. */
export class FenceOracle {
  readonly client: Redis | Cluster;
  private readonly owned: boolean;

  /** On `target`: a URL (a connection of its own, closed by close()) or a client the caller owns. */
  constructor(target: string | Redis | Cluster) {
    this.owned = typeof target === 'string';
    this.client = typeof target === 'string' ? new Redis(target, { maxRetriesPerRequest: 3 }) : target;
  }

  /** Writes to `resource` with `token`: accepted only when the token is above every accepted one. */
  async write(resource: string, token: number, writer: string): Promise<FencedWrite> {
    const [ok, last] = (await this.client.eval(WRITE, 1, stateKey(resource), String(token), writer)) as [
      number,
      string,
    ];
    return { accepted: ok === 1, last: Number(last) };
  }

  /** `holder` enters its critical section on `resource` with `token`; resolves with how many are inside. */
  async enter(resource: string, token: number, holder: string): Promise<number> {
    const keys = [stateKey(resource), insideKey(resource)];
    return Number(await this.client.eval(ENTER, 2, ...keys, String(token), holder));
  }

  /** `holder` leaves its critical section on `resource`. */
  async exit(resource: string, holder: string): Promise<void> {
    await this.client.srem(insideKey(resource), holder);
  }

  /** What the oracle saw for `resource` so far. */
  async state(resource: string): Promise<ResourceState> {
    const h = await this.client.hgetall(stateKey(resource));
    const n = (field: string): number => Number(h[field] ?? 0);
    return {
      token: n('token'),
      writer: h.writer ?? null,
      accepted: n('accepted'),
      rejected: n('rejected'),
      entries: n('entries'),
      overlaps: n('overlaps'),
      regressions: n('regressions'),
      maxOccupancy: n('maxOccupancy'),
    };
  }

  /** Closes the connection it opened (QUIT, then disconnect if the server is gone); a given client is left open. */
  async close(): Promise<void> {
    if (this.owned) await this.client.quit().catch(() => this.client.disconnect());
  }
}

const stateKey = (resource: string): string => `fence:{${resource}}`;
const insideKey = (resource: string): string => `fence:{${resource}}:inside`;
