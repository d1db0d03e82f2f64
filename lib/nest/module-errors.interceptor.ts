import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor, Optional } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { ModuleHttpErrorsInterceptor } from './distributed-lock.interceptor';
import { DISTRIBUTED_LOCK_SETTINGS } from './distributed-lock.module-definition';
import type { DistributedLockSettings } from './module-options';
import { ModuleTransportErrorsInterceptor } from './transports/distributed-lock-transport.interceptor';

/**
 * The one interceptor DistributedLockModule registers globally: the HTTP answers
 * (ModuleHttpErrorsInterceptor) in HTTP contexts, the transport answers (ModuleTransportErrorsInterceptor)
 * in every other one, each as it answered when the two were registered one after the other (each let
 * the other's contexts pass, so a call met exactly one of them that did anything). One layer instead of
 * two: Nest wraps every interceptor of every call in an AsyncResource.bind, an rxjs defer and a
 * mergeAll, about 8 KB allocated and tens of µs per layer and request (docs/BENCHMARKS.md).
 */
@Injectable()
export class ModuleLockErrorsInterceptor implements NestInterceptor {
  private readonly http: ModuleHttpErrorsInterceptor;
  private readonly transports: ModuleTransportErrorsInterceptor;

  constructor(@Optional() @Inject(DISTRIBUTED_LOCK_SETTINGS) settings?: DistributedLockSettings) {
    this.http = new ModuleHttpErrorsInterceptor(settings);
    this.transports = new ModuleTransportErrorsInterceptor(settings);
  }

  /** @internal */
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return context.getType() === 'http'
      ? this.http.intercept(context, next)
      : this.transports.intercept(context, next);
  }
}
