import type Redis from 'ioredis';
import { createLockEngine, CreateLockEngineOptions, KeySpace, LockEngine } from '../../lib/core';
import { keysWithoutTtl, pubsubChannels } from './redis-assertions';
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

/**
 * The "Redis left clean" invariant: no key without a TTL, no lock key left, no subscribed
 * channel (unsubscribes are asynchronous, so this waits for them). Returns what it found.
 */
export async function expectCleanRedis(
  admin: Redis,
  timeoutMs = 15_000,
): Promise<{ lockKeys: number; channels: number; keysWithoutTtl: number }> {
  const found = { lockKeys: 0, channels: 0, keysWithoutTtl: 0 };
  try {
    await waitUntil(
      async () => {
        found.lockKeys = (await admin.keys(`${PREFIX}*:m`)).length;
        found.channels = (await pubsubChannels(admin)).length;
        found.keysWithoutTtl = (await keysWithoutTtl(admin)).length;
        return found.lockKeys + found.channels + found.keysWithoutTtl === 0;
      },
      { timeoutMs, intervalMs: 50, description: 'Redis to be left clean' },
    );
  } catch {
    // fall through to the assertion below, which shows what was left
  }
  expect({
    lockKeys: await admin.keys(`${PREFIX}*:m`),
    channels: await pubsubChannels(admin),
    keysWithoutTtl: await keysWithoutTtl(admin),
  }).toEqual({ lockKeys: [], channels: [], keysWithoutTtl: [] });
  return found;
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
