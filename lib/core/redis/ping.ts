import { LockRedisError } from '../errors';
import { withDeadline } from '../waiting/with-deadline';
import type { RedisClient } from './redis-client';
import { fatalConnectionError } from './redis-connection';

/** PINGs one connection within `timeoutMs`; resolves the round trip in ms (two decimals). */
export async function pingClient(client: RedisClient, timeoutMs: number, name = 'Redis'): Promise<number> {
  const started = performance.now();
  try {
    await withDeadline(
      client.ping(),
      timeoutMs,
      () => new LockRedisError(`${name} did not answer PING within ${timeoutMs} ms`),
    );
  } catch (err) {
    const fatal = fatalConnectionError(client);
    if (fatal) throw fatal;
    if (err instanceof LockRedisError) throw err;
    throw new LockRedisError(
      `${name} failed PING: ${err instanceof Error ? err.message : String(err)}`,
      undefined,
      err,
    );
  }
  return Math.round((performance.now() - started) * 100) / 100;
}
