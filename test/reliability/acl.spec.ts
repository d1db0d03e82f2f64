/*
 * Least privilege (RELIABILITY.md scenario 19, issue 18 point 2): the ACL documented in
 * docs/SECURITY.md for a single Redis works for every lock kind, wake-ups and health; removing each
 * command (or the channel pattern) in turn gives a clear LockPermissionError before anything is
 * written — never a key without a TTL, never a half-written lock.
 */
import { createLockEngine } from '../../lib/core';
import { LockPermissionError } from '../../lib/core/errors';
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { keysWithoutTtl } from '../support/redis-assertions';
import { uniqueKey, useLockEnv } from '../support/lock-env';
import { waitUntil } from '../support/wait';

const env = useLockEnv();
const PREFIX = 'lock:';

/** The minimal ACL of docs/SECURITY.md (single Redis or Sentinel), as ACL SETUSER rules. */
const COMMANDS = [
  'evalsha', 'eval', 'evalsha_ro', 'eval_ro', 'ping', 'info', 'subscribe', 'unsubscribe', 'publish', 'time',
  'type', 'exists', 'get', 'set', 'del', 'pttl', 'pexpire',
  'hget', 'hmget', 'hset', 'hdel', 'hlen', 'hexists', 'hincrby',
  'zadd', 'zrem', 'zrange', 'zrangebyscore', 'zremrangebyscore', 'zcard', 'zscore',
]; // prettier-ignore
/** The inspection registry, force-release notices and operator calls (docs/SECURITY.md). */
const INSPECTION = ['multi', 'exec', 'psubscribe', 'punsubscribe', 'hgetall', 'xadd', 'xrevrange'];
const minimalRules = (commands: string[], channels = `&${PREFIX}*`): string[] => [
  'on', '>pw', 'resetkeys', `~${PREFIX}*`, 'resetchannels', channels, '-@all',
  ...commands.map((c) => `+${c}`),
]; // prettier-ignore

let seq = 0;
const engines: LockEngine[] = [];
async function engineAs(rules: string[]): Promise<LockEngine> {
  const user = `locks${++seq}`;
  await env.admin.call('ACL', 'SETUSER', user, ...rules);
  const engine = createLockEngine({
    redis: `redis://${user}:pw@127.0.0.1:${env.server.port}`,
    keyPrefix: PREFIX,
  });
  engines.push(engine);
  return engine;
}
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});

async function expectNothingWritten(): Promise<void> {
  expect(await keysWithoutTtl(env.admin, `${PREFIX}*`)).toEqual([]);
  // No lock key left (fencing counters and the inspection registry have TTLs, checked above).
  const lockKeys = (await env.admin.keys(`${PREFIX}*`)).filter((k) => !/:fence|\{~inspect\}/.test(k));
  expect(lockKeys).toEqual([]);
}

describe('the documented minimal ACL', () => {
  it('runs every lock kind, several keys, wake-ups, the watchdog, health and list()', async () => {
    const engine = await engineAs(minimalRules(COMMANDS.concat(INSPECTION)));
    const key = uniqueKey('acl');
    const first = await engine.acquire(key, { waitMs: 0 });
    const waiter = engine.acquire(key, { waitMs: 10_000 });
    setTimeout(() => void first.release(), 100);
    await (await waiter).release();
    for (const options of [
      { mode: 'read' },
      { mode: 'write' },
      { fair: true },
      { limit: 2 },
      { reentrant: false },
    ] as const) {
      const handle = await engine.acquire(uniqueKey('kind'), { ...options, waitMs: 0 });
      await handle.extend(5_000);
      expect(await handle.release()).toBe(true);
    }
    const several = await engine.acquire([uniqueKey('m1'), uniqueKey('m2')], { waitMs: 0 });
    expect(await several.release()).toBe(true);
    expect((await engine.readiness()).ready).toBe(true);
    // A hold long enough to be written to the registry of held locks, and listed from it.
    const long = await engine.acquire(uniqueKey('listed'), { waitMs: 0 });
    await waitUntil(async () => (await engine.list({ match: long.key })).locks.length === 1, {
      description: 'the lock listed',
    });
    expect(await engine.inspect(long.key)).toMatchObject({ key: long.key });
    expect(await long.release()).toBe(true);
    await expectNothingWritten();
  });
});

describe('one permission less', () => {
  // PING is only used by health (readiness), INFO only by ioredis' ready check (optional).
  const needed = COMMANDS.filter((c) => c !== 'ping' && c !== 'info');
  it.each(needed)('without %s: a clear LockPermissionError, nothing written', async (missing) => {
    // Scripts cached by earlier tests would hide a missing EVAL.
    await env.admin.script('FLUSH');
    const engine = await engineAs(minimalRules(needed.filter((c) => c !== missing).concat('ping', 'info')));
    for (const options of [
      {},
      { mode: 'write' },
      { fair: true },
      { limit: 3 },
      { reentrant: false },
    ] as const) {
      const err = (await engine
        .acquire(uniqueKey('minus'), { ...options, waitMs: 0 })
        .catch((e: unknown) => e)) as LockPermissionError;
      expect(err).toBeInstanceOf(LockPermissionError);
      expect(err.denied.join(' ')).toContain(missing.toUpperCase());
      expect(err.message).toMatch(/docs\/SECURITY\.md/);
    }
    await expectNothingWritten();
  });

  it('without the channel pattern: a clear LockPermissionError naming PUBLISH and SUBSCRIBE', async () => {
    const engine = await engineAs(minimalRules(COMMANDS, '&other:*'));
    const err = (await engine
      .acquire(uniqueKey('nochan'), { waitMs: 0 })
      .catch((e: unknown) => e)) as LockPermissionError;
    expect(err).toBeInstanceOf(LockPermissionError);
    expect(err.denied.join(' ')).toMatch(/PUBLISH .*SUBSCRIBE/);
    await expectNothingWritten();
  });

  it('without ping: locks work, health says why it is not ready', async () => {
    const engine = await engineAs(minimalRules(COMMANDS.filter((c) => c !== 'ping')));
    const handle = await engine.acquire(uniqueKey('noping'), { waitMs: 0 });
    expect(await handle.release()).toBe(true);
    const readiness = await engine.readiness();
    expect(readiness.ready).toBe(false);
    expect((readiness as { reason?: string }).reason).toMatch(/NOPERM.*ping/);
  });
});
