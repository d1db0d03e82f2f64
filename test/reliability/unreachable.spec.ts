/*
 * Redis unreachable from the start, on the default client (ioredis, opened from a URL): the call fails
 * with a LockRedisError that says so in the library's words. ioredis gives up on a command after
 * maxRetriesPerRequest reconnect attempts, and its own message ("Reached the max retries per request
 * limit (which is 3). Refer to "maxRetriesPerRequest" option for details.") names an option the user
 * never set; it stays available as the error's cause.
 */
import { createLockEngine } from '../../lib/core/public';
import { LockRedisError } from '../../lib';
import { getFreePort } from '../support/free-port';

it('fails a call with "Redis unreachable" in the library\'s words, keeping ioredis\' as its cause', async () => {
  const engine = createLockEngine({
    redis: `redis://127.0.0.1:${await getFreePort()}`, // nothing listens
    keyPrefix: 'unreachable:',
    // Far above the client's reconnect attempts: the failure is the client's giving up, not a deadline.
    commandTimeoutMs: 60_000,
  });
  try {
    const error = await engine.acquire('k', { waitMs: 60_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockRedisError);
    const { message, cause } = error as LockRedisError;
    expect(message).toMatch(
      /^Redis failed during [\w-]+ for lock "k": Redis unreachable: the client gave up on the command after \d+ reconnect attempts/,
    );
    expect(message).not.toMatch(/Refer to/);
    expect(String((cause as Error).message)).toMatch(/max retries per request/);
  } finally {
    await engine.close();
  }
});
