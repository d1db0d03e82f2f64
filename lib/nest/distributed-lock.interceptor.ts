import {
  BadRequestException,
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
import type { LockError, LockNotAcquiredError } from '../core';
import { LOCK_UNAVAILABLE_MESSAGE } from './distributed-lock.messages';
import { DISTRIBUTED_LOCK_SETTINGS } from './distributed-lock.module-definition';
import { LockedException } from './locked.exception';
import { DEFAULT_BUSY_STATUS, DistributedLockSettings } from './module-options';
import { retryAfterSeconds } from './retry-after';
import { LockAnswerLog } from './transports/lock-answer-log';
import { lockErrorCode } from './transports/lock-error-answer';

// Set on the request by the outermost instance, so one translation happens per request even when
// the module's global interceptor and a user's own (sub)class are both registered.
const TRANSLATED = Symbol.for('nestjs-distributed-lock:translated');

type HttpSettings = Pick<DistributedLockSettings, 'busyStatus' | 'retryAfter' | 'httpErrors'>;
const DEFAULT_SETTINGS: HttpSettings = {
  busyStatus: DEFAULT_BUSY_STATUS,
  retryAfter: true,
  httpErrors: true,
};

/**
 * Translates lock errors at the HTTP boundary, for decorated and manual locks alike: busy → 423
 * Locked (or `busyStatus`) with an honest `Retry-After`, Redis down or the service shutting down →
 * 503, a lock key built from request data that fails validation → 400. DistributedLockModule
 * registers it globally (`httpErrors: false` turns that off); it takes no lock itself. Outside HTTP
 * it lets errors through: DistributedLockTransportInterceptor answers in GraphQL, RPC and WebSocket
 * contexts; cron jobs and event handlers get the errors as thrown. Subclass it and override the
 * protected hooks to change the answers.
 */
@Injectable()
export class DistributedLockInterceptor implements NestInterceptor {
  /** Where busy and unavailable answers are logged (rate-limited; lock-answer-log.ts). */
  protected readonly answerLog = new LockAnswerLog();

  constructor(
    @Optional()
    @Inject(DISTRIBUTED_LOCK_SETTINGS)
    private readonly moduleSettings?: DistributedLockSettings,
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

  /** Maps one error (classified once, by lockErrorCode); anything that is not a lock error is returned unchanged. */
  protected translate(context: ExecutionContext, error: unknown): unknown {
    switch (lockErrorCode(error)) {
      case 'LOCKED': {
        const answer = this.createLockedException(context, error as LockNotAcquiredError);
        this.answerLog.answered('http', 'LOCKED', error, String(answer.getStatus()));
        return answer;
      }
      case 'SERVICE_UNAVAILABLE': {
        const answer = this.createUnavailableException(context, error as LockError);
        this.answerLog.answered('http', 'SERVICE_UNAVAILABLE', error, String(answer.getStatus()));
        return answer;
      }
      case 'BAD_USER_INPUT':
        // `description` keeps Nest's usual `error: 'Bad Request'` in the body, which `cause` alone drops.
        return new BadRequestException((error as Error).message, {
          cause: error,
          description: 'Bad Request',
        });
      default:
        return error; // any other lock error is a bug, not the client's doing: Nest answers 500
    }
  }

  /** The answer to "busy": sets `Retry-After` and returns a LockedException. */
  protected createLockedException(context: ExecutionContext, error: LockNotAcquiredError): HttpException {
    const seconds = this.getRetryAfterSeconds(error);
    if (seconds !== undefined) this.setHeader(context, 'Retry-After', String(seconds));
    return new LockedException({
      status: this.settings().busyStatus,
      retryAfterSeconds: seconds,
      cause: error,
    });
  }

  /** The answer to "Redis unreachable or failing" (or the service shutting down): 503. */
  protected createUnavailableException(_context: ExecutionContext, error: LockError): HttpException {
    // `description` keeps Nest's usual `error` field in the body, as for the 400 and the 423.
    return new ServiceUnavailableException(LOCK_UNAVAILABLE_MESSAGE, {
      cause: error,
      description: 'Service Unavailable',
    });
  }

  /** Seconds for `Retry-After` (see the module's `retryAfter` option). */
  protected getRetryAfterSeconds(error: LockNotAcquiredError): number | undefined {
    return retryAfterSeconds(this.settings().retryAfter, error);
  }

  /** Sets a response header: `header()` on Express and Fastify, `setHeader()` on a bare Node response. */
  protected setHeader(context: ExecutionContext, name: string, value: string): void {
    const response = context.switchToHttp().getResponse<Record<string, unknown> | undefined>();
    if (typeof response?.header === 'function')
      (response.header as (n: string, v: string) => void)(name, value);
    else if (typeof response?.setHeader === 'function')
      (response.setHeader as (n: string, v: string) => void)(name, value);
  }

  /** The HTTP settings of this module, or the defaults when registered outside it. */
  protected settings(): HttpSettings {
    return this.moduleSettings ?? DEFAULT_SETTINGS;
  }
}

/**
 * The instance DistributedLockModule registers globally: it stands aside under `httpErrors: false`,
 * and only the DistributedLockInterceptor instances the app registers itself answer.
 */
@Injectable()
export class ModuleHttpErrorsInterceptor extends DistributedLockInterceptor {
  /** @internal */
  override intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return this.settings().httpErrors ? super.intercept(context, next) : next.handle();
  }
}
