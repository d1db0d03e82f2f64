import {
  CallHandler,
  ExecutionContext,
  HttpException,
  Inject,
  Injectable,
  NestInterceptor,
  Optional,
  ServiceUnavailableException,
} from '@nestjs/common';
import { catchError, Observable, throwError } from 'rxjs';
import { LockNotAcquiredError, LockRedisError } from '../core/errors';
import { LOCK_UNAVAILABLE_MESSAGE } from './distributed-lock.messages';
import { DISTRIBUTED_LOCK_MODULE_OPTIONS } from './distributed-lock.module-definition';
import type { DistributedLockModuleOptions } from './interfaces';
import { lockServiceRegistry } from './lock-service-registry';
import { LockedException } from './locked.exception';
import { DEFAULT_BUSY_STATUS, ResolvedModuleOptions, resolveModuleOptions } from './module-options';

// Set on the request by the outermost instance, so a global subclass wins over the one the
// decorator adds to the route (global interceptors run outside route ones).
const TRANSLATED = Symbol.for('nestjs-distributed-lock:translated');

type HttpSettings = Pick<ResolvedModuleOptions, 'busyStatus' | 'retryAfter'>;

/**
 * Translates lock errors at the HTTP boundary: LockNotAcquiredError → 423 Locked (or `busyStatus`)
 * with `Retry-After`, LockRedisError → 503. It takes no lock itself (the decorated method does).
 * Outside HTTP (RPC, WebSockets, cron, events) errors pass through unchanged. @DistributedLock()
 * adds it to decorated methods; register it globally (APP_INTERCEPTOR) to cover manual locking
 * too, and subclass it to change the answers (override the protected hooks).
 */
@Injectable()
export class DistributedLockInterceptor implements NestInterceptor {
  private resolved?: HttpSettings;

  constructor(
    @Optional()
    @Inject(DISTRIBUTED_LOCK_MODULE_OPTIONS)
    private readonly moduleOptions?: DistributedLockModuleOptions,
  ) {}

  /** @internal */
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<Record<symbol, unknown> | undefined>();
    if (request) {
      if (request[TRANSLATED]) return next.handle();
      request[TRANSLATED] = true;
    }
    return next
      .handle()
      .pipe(catchError((error: unknown) => throwError(() => this.translate(context, error))));
  }

  /** Maps one error; anything that is not a lock error is returned unchanged. */
  protected translate(context: ExecutionContext, error: unknown): unknown {
    if (error instanceof LockNotAcquiredError) return this.createLockedException(context, error);
    if (error instanceof LockRedisError) return this.createUnavailableException(context, error);
    return error;
  }

  /** The answer to "busy": sets `Retry-After` and returns a LockedException. */
  protected createLockedException(context: ExecutionContext, error: LockNotAcquiredError): HttpException {
    const retryAfterSeconds = this.getRetryAfterSeconds(error);
    if (retryAfterSeconds !== undefined) this.setHeader(context, 'Retry-After', String(retryAfterSeconds));
    return new LockedException({ status: this.settings().busyStatus, retryAfterSeconds, cause: error });
  }

  /** The answer to "Redis unreachable or failing": 503. */
  protected createUnavailableException(_context: ExecutionContext, error: LockRedisError): HttpException {
    return new ServiceUnavailableException(LOCK_UNAVAILABLE_MESSAGE, { cause: error });
  }

  /** Seconds for `Retry-After`: the holder's remaining lease rounded up when known, else 1 (see `retryAfter`). */
  protected getRetryAfterSeconds(error: LockNotAcquiredError): number | undefined {
    const option = this.settings().retryAfter;
    if (option === false) return undefined;
    if (typeof option === 'number') return option;
    if (typeof option === 'function') {
      const seconds = option(error);
      return seconds === undefined ? undefined : Math.max(0, Math.ceil(seconds));
    }
    return error.retryAfterMs > 0 ? Math.ceil(error.retryAfterMs / 1000) : 1;
  }

  /** Sets a response header: `header()` on Express and Fastify, `setHeader()` on a bare Node response. */
  protected setHeader(context: ExecutionContext, name: string, value: string): void {
    const response = context.switchToHttp().getResponse<Record<string, unknown> | undefined>();
    if (typeof response?.header === 'function')
      (response.header as (n: string, v: string) => void)(name, value);
    else if (typeof response?.setHeader === 'function')
      (response.setHeader as (n: string, v: string) => void)(name, value);
  }

  /** The HTTP settings: this module's options when injectable here, else those of the active lock service. */
  protected settings(): HttpSettings {
    if (this.moduleOptions) return (this.resolved ??= resolveModuleOptions(this.moduleOptions));
    return (
      lockServiceRegistry.resolve(undefined)?.settings ?? {
        busyStatus: DEFAULT_BUSY_STATUS,
        retryAfter: true,
      }
    );
  }
}
