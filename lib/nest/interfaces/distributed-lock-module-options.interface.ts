// Past the core's public surface: the module's `redis` and `redlock` options are the core's own
// connection option types.
import type { LockEngineOptions, LockNotAcquiredError } from '../../core';
import type { RedisConnectionOption, RedlockOption } from '../../core/internal';
import type { LockTelemetryOptions } from '../../observability/lock-telemetry';

/**
 * How the `Retry-After` header of a 423 answer (and `retryAfterMs` outside HTTP) is chosen.
 * `true` (default): the engine's estimate of when the lock frees (`expectedFreeInMs`: a fixed lease's
 * remaining time, else the key's recent hold times), rounded up to seconds; 1 second when unknown.
 * A number: always that many seconds. A function: its result in seconds (`undefined` = none).
 * `false`: none.
 */
export type RetryAfterOption = boolean | number | ((error: LockNotAcquiredError) => number | undefined);

/** Options of DistributedLockModule.forRoot() / the factory of forRootAsync(). */
export interface DistributedLockModuleOptions extends LockEngineOptions {
  /** A URL, ioredis options (standalone or Sentinel), or an existing ioredis Redis / Cluster (never closed by the module). */
  redis?: RedisConnectionOption;
  /**
   * Instead of `redis`: independent masters locked by RedLock quorum — an array of connections, or
   * `{ nodes, nodeTimeoutMs, retryJitterMs }`. Clients passed in are never closed by the module.
   */
  redlock?: RedlockOption;
  /** HTTP status of a "busy" answer at the HTTP boundary. Default 423 (Locked). */
  busyStatus?: number;
  /** The `Retry-After` header of a "busy" answer. Default `true` (see RetryAfterOption). */
  retryAfter?: RetryAfterOption;
  /**
   * Default `true`: the module registers a global interceptor that answers lock errors on HTTP
   * routes (busy → `busyStatus`, Redis down → 503, a bad key from request data → 400), for
   * decorated and manual locks alike. `false`: register DistributedLockInterceptor yourself.
   */
  httpErrors?: boolean;
  /**
   * Default `true`: the module registers a global interceptor that answers lock errors in GraphQL
   * resolvers (a GraphQLError with `extensions.code` LOCKED / SERVICE_UNAVAILABLE / BAD_USER_INPUT
   * and `retryAfterMs`), microservice handlers (an RpcException) and WebSocket gateways (a
   * WsException). `false`: register DistributedLockTransportInterceptor (or a subclass) yourself.
   */
  transportErrors?: boolean;
  /**
   * OpenTelemetry spans and metrics for the lock lifecycle (needs the optional peer
   * `@opentelemetry/api`; see docs/OBSERVABILITY.md). `true` for the defaults. Default off.
   */
  telemetry?: boolean | LockTelemetryOptions;
}

/** A class whose instance builds the module options (forRootAsync's `useClass` / `useExisting`). */
export interface DistributedLockOptionsFactory {
  /** Returns the module options. */
  createDistributedLockOptions(): DistributedLockModuleOptions | Promise<DistributedLockModuleOptions>;
}
