/** Settings of the sample app; every field has a default so `npm run start:sample` works bare. */
export interface SampleConfig {
  /** HTTP port. Env `PORT`, default 3000. */
  port: number;
  /** Where Redis is (locks and the app's own data). Env `REDIS_URL`, default redis://127.0.0.1:6379. */
  redisUrl: string;
  /**
   * The client the locks run on (env `REDIS_CLIENT`): `ioredis` (default: the URL is passed as is),
   * `node-redis` (a `createClient()` the app makes and passes in) or `glide` (a GlideClient).
   */
  redisClient: 'ioredis' | 'node-redis' | 'glide';
  /** Prefix of every key the app and its locks write, so a shared Redis stays tidy. Env `KEY_PREFIX`. */
  keyPrefix: string;
  /**
   * The "small await" inside the seckill critical section, in ms (env `SECKILL_DELAY_MS`, default 1).
   * It stands for real work between read and write and is what lets unguarded requests interleave.
   */
  seckillDelayMs: number;
  /**
   * How long a request may queue for a lock (env `LOCK_WAIT_MS`, default 60 000); the lock module's
   * `defaults.waitMs`. The demo puts 1,000 requests on one key at once and they must queue, not fail,
   * so this is far above the worst queueing time there (2,000 critical sections of a few ms each).
   */
  lockWaitMs: number;
  /**
   * A fixed lease for every lock (env `LOCK_LEASE_MS`; the module's `defaults.leaseMs`). Unset (the
   * default): the watchdog keeps each lock alive while its handler runs.
   */
  lockLeaseMs?: number;
  /**
   * The watchdog's lease (env `LOCK_WATCHDOG_MS`; the module's `watchdogLeaseMs`, renewed every third of
   * it). Unset (the default): the module's 30 000. A shorter one finds a lost lock sooner.
   */
  lockWatchdogMs?: number;
  /**
   * PostgreSQL for the inventory (env `DATABASE_URL`, e.g. postgres://user@127.0.0.1:5432/db): its
   * writes go through the fencing SQL helper. Unset (the default): the inventory lives in Redis.
   */
  databaseUrl?: string;
}

/** Injection token of the SampleConfig. */
export const SAMPLE_CONFIG = Symbol('SAMPLE_CONFIG');

/** Defaults of every setting. */
export const DEFAULT_SAMPLE_CONFIG: SampleConfig = {
  port: 3000,
  redisUrl: 'redis://127.0.0.1:6379',
  redisClient: 'ioredis',
  keyPrefix: 'sample:',
  seckillDelayMs: 1,
  lockWaitMs: 60_000,
};

/** Reads the settings from environment variables, refusing malformed numbers with the variable's name. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): SampleConfig {
  const d = DEFAULT_SAMPLE_CONFIG;
  return {
    port: intFromEnv(env, 'PORT', d.port),
    redisUrl: env.REDIS_URL || d.redisUrl,
    redisClient: clientFromEnv(env.REDIS_CLIENT) ?? d.redisClient,
    keyPrefix: env.KEY_PREFIX ?? d.keyPrefix,
    seckillDelayMs: intFromEnv(env, 'SECKILL_DELAY_MS', d.seckillDelayMs),
    lockWaitMs: intFromEnv(env, 'LOCK_WAIT_MS', d.lockWaitMs),
    ...(env.LOCK_LEASE_MS ? { lockLeaseMs: intFromEnv(env, 'LOCK_LEASE_MS', 0) } : {}),
    ...(env.LOCK_WATCHDOG_MS ? { lockWatchdogMs: intFromEnv(env, 'LOCK_WATCHDOG_MS', 0) } : {}),
    ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}),
  };
}

function intFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    throw new RangeError(
      `Environment variable ${name} must be a whole number >= 0, got ${JSON.stringify(raw)}`,
    );
  }
  return value;
}

function clientFromEnv(value: string | undefined): SampleConfig['redisClient'] | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'ioredis' || value === 'node-redis' || value === 'glide') return value;
  throw new TypeError(`REDIS_CLIENT must be ioredis, node-redis or glide, got ${JSON.stringify(value)}`);
}
