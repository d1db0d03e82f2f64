import { assertConnectionOption, type RedisConnectionOption } from '../redis/redis-connection';
import {
  resolveRedlockOptions,
  type RedlockOption,
  type ResolvedRedlockOptions,
} from './redlock/redlock-options';
import { ENGINE_OPTION_NAMES, LockEngineOptions, ResolvedEngineOptions } from '../options/lock-options';
import { resolveEngineOptions } from '../options/resolve-engine-options';
import { snapshotOptions } from '../options/validation';
import { describe } from '../errors/message-text';

/** Options of createLockEngine: where Redis is (`redis` or `redlock`), plus the engine tuning. */
export interface CreateLockEngineOptions extends LockEngineOptions {
  /** A URL, ioredis options (standalone or Sentinel), or an existing ioredis Redis / Cluster (never closed by us). */
  redis?: RedisConnectionOption;
  /** Instead of `redis`: independent masters, locked by RedLock quorum (see docs/TOPOLOGIES.md). */
  redlock?: RedlockOption;
}

/** Where the locks live, validated (nothing is connected yet). */
export type ResolvedConnectionOption =
  | { readonly redis: RedisConnectionOption; readonly redlock?: undefined }
  | { readonly redlock: ResolvedRedlockOptions; readonly redis?: undefined };

/** Every option resolved once: the engine tuning with defaults, and the connection. */
export interface ResolvedLockConfig {
  readonly engine: ResolvedEngineOptions;
  readonly connection: ResolvedConnectionOption;
}

/** The names CreateLockEngineOptions accepts. */
export const LOCK_CONFIG_OPTION_NAMES: readonly string[] = ['redis', 'redlock', ...ENGINE_OPTION_NAMES];

/**
 * The one place options are validated and defaulted, before anything connects. `where` names the
 * options in messages; `extraNames` are names the caller handles itself (e.g. the Nest module's
 * HTTP settings), listed among the known ones when an unknown name is refused.
 */
export function resolveLockConfig(
  options: unknown,
  where = 'lock engine options',
  extraNames: readonly string[] = [],
): ResolvedLockConfig {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`The ${where} must be an object, got ${describe(options)}`);
  }
  // Read once, own properties only (getters, Proxies and inherited values cannot change a value later).
  const all = snapshotOptions(options, [...LOCK_CONFIG_OPTION_NAMES, ...extraNames], where);
  const { redis, redlock, ...rest } = all as CreateLockEngineOptions & Record<string, unknown>;
  const engineOptions = Object.fromEntries(
    Object.entries(rest).filter(([name, value]) => !extraNames.includes(name) && value !== undefined),
  ) as LockEngineOptions;
  const engine = resolveEngineOptions(engineOptions);
  if (redis !== undefined && redlock !== undefined) {
    throw new TypeError('Give either "redis" (one deployment) or "redlock" (independent masters), not both');
  }
  if (redlock !== undefined) {
    if (engine.replicas) {
      throw new TypeError(
        '"replicas" (WAIT) does not apply to "redlock": each RedLock node is its own master',
      );
    }
    return { engine, connection: { redlock: resolveRedlockOptions(redlock, engine.commandTimeoutMs) } };
  }
  if (redis === undefined) {
    throw new TypeError(
      `No connection in the ${where}: it needs a "redis" option (a URL, ioredis options or a client), or "redlock" for RedLock`,
    );
  }
  assertConnectionOption(redis);
  return { engine, connection: { redis } };
}
