import type { DynamicModule } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { DistributedLockModule, type LockHandle } from '../../lib';
import { createLockEngine, type LockEngine } from '../../lib/core/public';
import { startRedis, type RedisServerProcess } from './redis-server';
import { sleep } from './wait';
import type { CapturingLogger } from './capturing-logger';
import { uniquePrefix } from './nest-env';

/**
 * The key a busy answer must never reveal: an e-mail address, with CR/LF that a log line must
 * escape. Handlers lock `account:<email>`.
 */
export const SECRET_EMAIL = 'alice.secret@example.com\r\nFORGED LOG LINE';

/** The part of the key to look for in anything a client receives. */
export const SECRET_PART = 'alice.secret@example.com';

/** A Redis of its own for the app's locks (killed for the "Redis down" case), and another replica on it. */
export interface LockFixture {
  readonly redis: RedisServerProcess;
  readonly prefix: string;
  /** DistributedLockModule.forRoot() on this Redis: a short command timeout, so "down" answers fast. */
  module(extra?: Record<string, unknown>): DynamicModule;
  /** Takes `key` as another replica would, for `leaseMs`. */
  holdElsewhere(key: string, leaseMs?: number): Promise<LockHandle>;
  /** Stops the other replica and the Redis. */
  close(): Promise<void>;
}

/** Starts a lock Redis and an engine standing for another replica. */
export async function startLockFixture(name: string): Promise<LockFixture> {
  const redis = await startRedis();
  const prefix = uniquePrefix(name);
  let other: LockEngine | undefined;
  return {
    redis,
    prefix,
    module: (extra = {}) =>
      DistributedLockModule.forRoot({
        redis: redis.url,
        keyPrefix: prefix,
        commandTimeoutMs: 1000,
        ...extra,
      }),
    holdElsewhere: async (key, leaseMs = 30_000) => {
      other ??= createLockEngine({ redis: redis.url, keyPrefix: prefix });
      return other.acquire(key, { leaseMs });
    },
    close: async () => {
      await other?.close();
      await redis.stop();
    },
  };
}

/**
 * An account store whose debit is a read-modify-write: correct only when calls for one account
 * never overlap. It records the most calls that ever ran at once.
 */
@Injectable()
export class Ledger {
  private readonly balances = new Map<string, number>();
  private running = 0;
  /** The most debits that ran at the same time. */
  maxRunning = 0;

  /** Takes `amount` from `account` (starting at 100), slowly enough for overlaps to show. */
  async debit(account: string, amount: number): Promise<number> {
    this.running += 1;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    try {
      const before = this.balances.get(account) ?? 100;
      await sleep(15);
      this.balances.set(account, before - amount);
      return before - amount;
    } finally {
      this.running -= 1;
    }
  }

  /** The balance of `account` now. */
  balance(account: string): number {
    return this.balances.get(account) ?? 100;
  }
}

/** Asserts that `received` (anything a client got) does not contain the secret part of the key. */
export function revealsKey(received: unknown): boolean {
  return JSON.stringify(received).includes(SECRET_PART);
}

/**
 * The busy answer over a message transport (`rpc`, `ws`): while another replica holds the account's lock
 * for 20 s, `ask()` (a decorated handler with waitMs 0) gets { status, code: LOCKED, message, retryAfterMs }
 * with retryAfterMs within the holder's lease and nothing of the key; the logger has one warn line, escaped,
 * and no ERROR.
 */
export async function expectLockedAnswer(
  fixture: LockFixture,
  logger: CapturingLogger,
  transport: 'rpc' | 'ws',
  ask: () => Promise<any>,
): Promise<void> {
  const held = await fixture.holdElsewhere(`account:${SECRET_EMAIL}`, 20_000);
  const from = logger.lines.length;
  try {
    const error = await ask();
    expect(error).toEqual({
      status: 'error',
      code: 'LOCKED',
      message: 'The resource is locked by another request; retry later',
      retryAfterMs: expect.any(Number),
    });
    expect(error.retryAfterMs).toBeGreaterThan(10_000);
    expect(error.retryAfterMs).toBeLessThanOrEqual(20_000);
    expect(revealsKey(error)).toBe(false);
  } finally {
    await held.release();
  }
  expect(logger.since(from, 'error')).toEqual([]);
  const warns = logger.since(from, 'warn');
  expect(warns).toHaveLength(1);
  expect(warns[0]!.message).toContain(`Answering LOCKED over ${transport}`);
  expect(warns[0]!.message).not.toMatch(/[\r\n]/);
}
