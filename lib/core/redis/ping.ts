import { LockRedisError } from '../errors';
import { withDeadline } from '../waiting/with-deadline';
import type { RedisDoor } from './redis-door';

/** PINGs one door within `timeoutMs`; resolves the round trip in ms (two decimals). */
export async function pingDoor(door: RedisDoor, timeoutMs: number, name = 'Redis'): Promise<number> {
  const started = performance.now();
  try {
    await withDeadline(
      door.command(['PING']),
      timeoutMs,
      () => new LockRedisError(`${name} did not answer PING within ${timeoutMs} ms`),
    );
  } catch (err) {
    const fatal = door.fatalError();
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
