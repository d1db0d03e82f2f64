// Observability: OpenTelemetry, prom-client and diagnostics_channel. No optional peer is loaded until a
// function that needs it is called.
// Past the core's public surface: the diagnostics channels are the core's events (events/lock-channels.ts),
// published by the engine itself; this entry is where users find their names. OptionalPeerMissingError is
// the core's error for a missing optional peer (errors/optional-peer.ts), thrown by this entry's helpers.
/**
 * OpenTelemetry spans and metrics, prom-client metrics and diagnostics_channel names (docs/OBSERVABILITY.md).
 * @module nestjs-distributed-lock/observability
 */
export { instrumentLockEvents } from './lock-telemetry';
export type { LockTelemetryOptions, LockTelemetryDisposer } from './lock-telemetry';
export { registerLockMetrics } from './prometheus';
export type { LockMetricsOptions, PromClientLike, PromRegistryLike } from './prometheus';
export type { LockEventSource } from './lock-source';
export type { LockKeyAttribute, LockKeySecret } from './key-label';
export { hashKey } from './key-label';
export type { LockWaitOutcome } from './lock-lifecycle';
export {
  INSTRUMENTATION_SCOPE,
  LOCK_ATTRIBUTES,
  OTEL_METRICS,
  OTEL_SPANS,
  PROM_METRICS,
} from './lock-metric-names';
export { OptionalPeerMissingError } from '../core/internal';
export type * from './otel-api';
export { LOCK_CHANNEL_PREFIX, lockChannelName, lockChannels } from '../core/events/lock-channels';
export type { LockChannelMessage } from '../core/events/lock-channels';
