import { Inject, Injectable, OnApplicationShutdown, OnModuleInit, Optional, Provider } from '@nestjs/common';
import {
  instrumentLockEvents,
  LockTelemetryDisposer,
  LockTelemetryOptions,
} from '../observability/lock-telemetry';
import { DISTRIBUTED_LOCK_MODULE_OPTIONS } from './distributed-lock.module-definition';
import { DistributedLockService } from './distributed-lock.service';

/** `telemetry` as the module takes it: `true` for the defaults, an options object, or off. */
export type DistributedLockTelemetrySetting = boolean | LockTelemetryOptions | undefined;

/** Token of an explicit telemetry setting (see provideLockTelemetry); wins over the module option. */
export const DISTRIBUTED_LOCK_TELEMETRY = Symbol('DISTRIBUTED_LOCK_TELEMETRY');

/**
 * Which DistributedLockTelemetry instruments a lock service's events now: a service is instrumented
 * once, however many modules ask (the module option and provideLockTelemetry() in an importing module
 * both make an instance for the same service).
 */
const instrumenting = new WeakMap<object, { telemetry: DistributedLockTelemetry; explicit: boolean }>();

/**
 * Wires OpenTelemetry to the lock service of its module: instruments `service.events` at init (when
 * the module's `telemetry` option, or an explicit DISTRIBUTED_LOCK_TELEMETRY value, is set) and
 * stops at shutdown. Fails the start-up when telemetry is asked for without `@opentelemetry/api`.
 */
@Injectable()
export class DistributedLockTelemetry implements OnModuleInit, OnApplicationShutdown {
  private dispose?: LockTelemetryDisposer;

  constructor(
    private readonly locks: DistributedLockService,
    @Optional()
    @Inject(DISTRIBUTED_LOCK_TELEMETRY)
    private readonly explicit?: DistributedLockTelemetrySetting,
    @Optional()
    @Inject(DISTRIBUTED_LOCK_MODULE_OPTIONS)
    private readonly moduleOptions?: { telemetry?: DistributedLockTelemetrySetting },
  ) {}

  /** @internal */
  onModuleInit(): void {
    const setting = this.explicit ?? this.moduleOptions?.telemetry;
    if (!setting || this.dispose) return;
    const events = this.locks.events;
    const explicit = this.explicit !== undefined;
    const current = instrumenting.get(events);
    if (current) {
      // provideLockTelemetry() wins over the module option; of two of the same rank, the first stays.
      if (!explicit || current.explicit) return;
      current.telemetry.stop();
    }
    this.dispose = instrumentLockEvents(events, {
      // The gauge reads the service's live count, not only grants taken since init.
      heldLocks: () => this.locks.stats().held,
      ...(setting === true ? {} : setting),
    });
    instrumenting.set(events, { telemetry: this, explicit });
  }

  /** @internal */
  onApplicationShutdown(): void {
    this.stop();
  }

  private stop(): void {
    this.dispose?.();
    this.dispose = undefined;
    const events = this.locks.events;
    if (instrumenting.get(events)?.telemetry === this) instrumenting.delete(events);
  }
}

/**
 * Providers that switch telemetry on for the DistributedLockService visible to the module they are
 * added to, without the module option: `providers: [...provideLockTelemetry({ key: 'raw' })]`.
 */
export function provideLockTelemetry(setting: true | LockTelemetryOptions = true): Provider[] {
  return [{ provide: DISTRIBUTED_LOCK_TELEMETRY, useValue: setting }, DistributedLockTelemetry];
}
