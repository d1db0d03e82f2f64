/*
 * The fencing oracle of the topology tests: a separate, plain redis-server that plays the storage
 * a lock protects (Kleppmann's fenced store). Every holder calls enter() when its critical section
 * starts and exit() when it ends. enter() counts an overlap when another holder is still inside,
 * and a regression when the fencing token is not greater than every token seen before. Atomic
 * (one Lua script), so the counts are exact across any number of OS processes.
 */
import Redis from 'ioredis';

// KEYS[1] inside (holder id)   KEYS[2] last token   KEYS[3] stats hash
// ARGV[1] token   ARGV[2] holder id
const ENTER = `
local stats = KEYS[3]
redis.call('HINCRBY', stats, 'entries', 1)
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HINCRBY', stats, 'overlaps', 1) end
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
local token = tonumber(ARGV[1])
if token <= last then
  redis.call('HINCRBY', stats, 'regressions', 1)
else
  redis.call('SET', KEYS[2], ARGV[1])
end
redis.call('SET', KEYS[1], ARGV[2])
return 1`;

// KEYS[1] inside   ARGV[1] holder id
const EXIT = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end return 1`;

/** What the oracle saw in one scope. */
export interface OracleFigures {
  entries: number;
  overlaps: number;
  regressions: number;
}

/** A connection to the oracle, usable from tests and workers. */
export class FenceOracle {
  private readonly client: Redis;

  constructor(url: string) {
    this.client = new Redis(url, { maxRetriesPerRequest: 3 });
  }

  /** Records that `holder` entered its critical section with `token`. */
  async enter(scope: string, token: number, holder: string): Promise<void> {
    await this.client.eval(
      ENTER,
      3,
      `${scope}:inside`,
      `${scope}:last`,
      `${scope}:stats`,
      String(token),
      holder,
    );
  }

  /** Records that `holder` left its critical section. */
  async exit(scope: string, holder: string): Promise<void> {
    await this.client.eval(EXIT, 1, `${scope}:inside`, holder);
  }

  /** The counts of `scope` so far. */
  async figures(scope: string): Promise<OracleFigures> {
    const s = await this.client.hgetall(`${scope}:stats`);
    return {
      entries: Number(s.entries ?? 0),
      overlaps: Number(s.overlaps ?? 0),
      regressions: Number(s.regressions ?? 0),
    };
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
