import type Redis from 'ioredis';
import { createLockEngine, CreateLockEngineOptions, LockEngine } from '../../lib/core';
import { KeySpace } from '../../lib/core/internal';
import { keysWithoutTtl, lockChannels } from './redis-assertions';
import { waitUntil } from './wait';

/** Key prefix of every lock the fault suite takes. */
export const PREFIX = 'lock:';
const keySpace = new KeySpace(PREFIX);

/** The Redis key of the (mutex / token) lock of `key`. */
export function lockKeyOf(key: string): string {
  return keySpace.names(key).lock;
}

/** The wake-up channel of the (mutex / token) lock of `key`. */
export function channelOf(key: string): string {
  return keySpace.names(key).channel;
}

/** Watchdog lease of the fault suite: short, so faults show within seconds instead of Redisson's 30 s. */
export const WATCHDOG_LEASE_MS = 1500;
/** Watchdog period: leaves 1.2 s of slack for a renewal on a loaded machine. */
export const RENEW_EVERY_MS = 300;
/** Command timeout where timeouts are not what a test is about (tests of timeouts set their own). */
export const COMMAND_TIMEOUT_MS = 2000;

/** An engine tuned for fault tests (see the constants above); `overrides` win. */
export function faultEngine(
  redis: CreateLockEngineOptions['redis'],
  overrides: Partial<CreateLockEngineOptions> = {},
): LockEngine {
  return createLockEngine({
    redis,
    keyPrefix: PREFIX,
    watchdogLeaseMs: WATCHDOG_LEASE_MS,
    renewEveryMs: RENEW_EVERY_MS,
    commandTimeoutMs: COMMAND_TIMEOUT_MS,
    ...overrides,
  });
}

/** Engine options a worker gets in ENGINE_OPTIONS (the same tuning as faultEngine). */
export const WORKER_ENGINE_OPTIONS = {
  keyPrefix: PREFIX,
  watchdogLeaseMs: WATCHDOG_LEASE_MS,
  renewEveryMs: RENEW_EVERY_MS,
  commandTimeoutMs: COMMAND_TIMEOUT_MS,
};

/** How long Redis must stay clean before expectCleanRedis accepts it (more than one registry tick). */
const CLEAN_FOR_MS = 300;

/**
 * The "Redis left clean" invariant: no key without a TTL, no lock key left, no subscribed
 * channel. Unsubscribes are asynchronous, so this waits for them; and a command a client sent
 * before the check began (a SUBSCRIBE queued during a freeze, flushed when Redis thaws) can land
 * just after a first clean read, to be undone a registry tick later. So Redis must read clean
 * for CLEAN_FOR_MS in a row, and the assertion shows the last read (not a second one).
 */
export async function expectCleanRedis(admin: Redis, timeoutMs = 15_000): Promise<void> {
  const read = async () => ({
    lockKeys: await admin.keys(`${PREFIX}*:m`),
    channels: await lockChannels(admin),
    keysWithoutTtl: await keysWithoutTtl(admin),
  });
  let last: Awaited<ReturnType<typeof read>> | undefined;
  let cleanSince: number | undefined;
  try {
    await waitUntil(
      async () => {
        // A read that fails leaves nothing to go by: the clean run starts again.
        last = undefined;
        try {
          last = await read();
        } catch (error) {
          cleanSince = undefined;
          throw error;
        }
        if (last.lockKeys.length + last.channels.length + last.keysWithoutTtl.length > 0) {
          cleanSince = undefined;
          return false;
        }
        cleanSince ??= performance.now();
        return performance.now() - cleanSince >= CLEAN_FOR_MS;
      },
      { timeoutMs, intervalMs: 50, description: 'Redis to be left clean' },
    );
  } catch {
    // fall through to the assertion below, which shows what the last read found
  }
  expect(last ?? (await read())).toEqual({ lockKeys: [], channels: [], keysWithoutTtl: [] });
}

/** Counts of this process' active libuv resources by type (timers, sockets, ...). */
export function activeResources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

/**
 * Waits until the active resources are back to `baseline` (sockets close asynchronously) and
 * returns how many are left over per type (all zero when nothing leaked).
 */
export async function leakedResources(
  baseline: Record<string, number>,
  timeoutMs = 5000,
): Promise<Record<string, number>> {
  const diff = (): Record<string, number> => {
    const now = activeResources();
    const out: Record<string, number> = {};
    for (const type of new Set([...Object.keys(now), ...Object.keys(baseline)])) {
      const extra = (now[type] ?? 0) - (baseline[type] ?? 0);
      if (extra > 0) out[type] = extra;
    }
    return out;
  };
  try {
    await waitUntil(() => Object.keys(diff()).length === 0, {
      timeoutMs,
      intervalMs: 20,
      description: 'resources back to baseline',
    });
  } catch {
    // reported by the caller's assertion
  }
  return diff();
}

/** Resolves with the reason once `signal` aborts (at once if it already has). */
export function aborted(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) =>
    signal.addEventListener('abort', () => resolve(signal.reason), { once: true }),
  );
}
