import { LockPermissionError } from '../errors';
import type { RedisGateway } from './redis-gateway';
import { defineScript } from './script-library';

/** The commands the lock scripts run on a lock's keys, each with sample arguments after the key. */
const KEY_COMMANDS = [
  'TYPE',
  'EXISTS',
  'GET',
  'SET v PX 1 GET',
  'DEL',
  'PTTL',
  'PEXPIRE 1',
  'HGET f',
  'HMGET f g',
  'HSET f v',
  'HDEL f',
  'HLEN',
  'HEXISTS f',
  'HINCRBY f 1',
  'ZADD 1 m',
  'ZREM m',
  'ZRANGE 0 0',
  'ZRANGEBYSCORE 0 1',
  'ZREMRANGEBYSCORE 0 1',
  'ZCARD',
  'ZSCORE m',
];

const ACL_CHECK = defineScript<string[], string[]>('acl-check');

/**
 * Asks Redis (7+, `redis.acl_check_cmd`) whether this connection's user may run every command the
 * library needs on keys and channels under `keyPrefix`. Rejects with LockPermissionError naming what
 * is missing (EVALSHA/EVAL themselves included); resolves true when all is allowed or Redis cannot tell.
 * Other failures (connection trouble) reject with the error as it is: the check is tried again.
 */
export async function checkPermissions(gateway: RedisGateway, keyPrefix: string): Promise<boolean> {
  const publish = gateway.publishCommand;
  const key = `${keyPrefix}{acl-check}:m`;
  const channel = `${key}:ch`;
  const sharded = publish === 'SPUBLISH';
  const [subscribe, unsubscribe] = sharded ? ['SSUBSCRIBE', 'SUNSUBSCRIBE'] : ['SUBSCRIBE', 'UNSUBSCRIBE'];
  const args = [key, channel, publish, subscribe, unsubscribe, ...KEY_COMMANDS];
  let denied: string[];
  try {
    // Read-only script commands (Redis 7): the check reads and writes nothing, and it does not show
    // up among the lock scripts' own EVALSHA/EVAL calls.
    denied = await gateway.run(ACL_CHECK, [], args, { readOnly: true, ungated: true });
  } catch (failure) {
    // The gateway wraps Redis' answer (LockRedisError, or LockPermissionError for NOPERM): read that.
    const err = failure instanceof Error && failure.cause !== undefined ? failure.cause : failure;
    const message = err instanceof Error ? err.message : String(err);
    // Before Redis 7 there is neither EVAL_RO nor redis.acl_check_cmd: nothing to ask.
    if (/unknown command/i.test(message)) return true;
    if (!message.startsWith('NOPERM')) throw err;
    throw new LockPermissionError(
      `The Redis user may not run Lua scripts (${message}); the library needs EVALSHA and EVAL, and ` +
        `EVALSHA_RO and EVAL_RO for its start-up check (see the ACL in docs/SECURITY.md)`,
      ['EVALSHA', 'EVAL', 'EVALSHA_RO', 'EVAL_RO'],
      err,
    );
  }
  if (denied.length === 0 || denied[0] === '?') return true;
  throw new LockPermissionError(
    `The Redis user may not run ${denied.join(', ')} on keys and channels under "${keyPrefix}"; ` +
      `the library needs them (see the ACL in docs/SECURITY.md). Nothing was written.`,
    denied,
  );
}
