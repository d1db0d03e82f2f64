// The public API of nestjs-distributed-lock: the lock engine (also usable from plain Node) and the Nest layer.
export * from './core';
export * from './nest';
export * from './observability';
export {
  DistributedLockTelemetry,
  DISTRIBUTED_LOCK_TELEMETRY,
  provideLockTelemetry,
} from './nest/telemetry.provider';
export type { DistributedLockTelemetrySetting } from './nest/telemetry.provider';
