import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor, Optional } from '@nestjs/common';
import { catchError, Observable, of, throwError } from 'rxjs';
import { DISTRIBUTED_LOCK_SETTINGS } from '../distributed-lock.module-definition';
import type { RetryAfterOption } from '../interfaces';
import type { DistributedLockSettings } from '../module-options';
import { LockAnswerLog } from './lock-answer-log';
import { LockErrorAnswer, lockErrorAnswer } from './lock-error-answer';
import { createGraphqlError, createRpcException, createWsException } from './transport-errors';

/** The execution context types this interceptor answers in (ExecutionContext.getType()). */
export type LockTransport = 'graphql' | 'rpc' | 'ws';
const TRANSPORTS = new Set<string>(['graphql', 'rpc', 'ws']);

// Calls already answered by an outer instance: one translation per call even when the module's
// global interceptor and a user's own subclass are both registered (the outermost one answers).
const ANSWERING = new WeakSet<ExecutionContext>();

type TransportSettings = Pick<DistributedLockSettings, 'retryAfter' | 'transportErrors'>;
const DEFAULT_SETTINGS: TransportSettings = { retryAfter: true, transportErrors: true };

/**
 * Answers lock errors outside HTTP in each transport's own terms, for decorated and manual locks
 * alike; the context type is read per call (ExecutionContext.getType()):
 *
 * - GraphQL: a `GraphQLError` with `extensions: { code, retryAfterMs? }`, returned as the resolver's
 *   result (graphql-js turns it into the field's error, as Nest's GqlExceptionFilter convention does),
 *   so Nest does not log it as an unhandled ERROR;
 * - microservices: an `RpcException` whose error object is `{ status: 'error', code, message, retryAfterMs? }`;
 * - WebSockets: a `WsException` with the same object (Nest sends it as the `exception` event).
 *
 * `code` is LOCKED (busy; `retryAfterMs` from the `retryAfter` option), SERVICE_UNAVAILABLE (Redis
 * down or the service shutting down), BAD_USER_INPUT (a key built from the message was refused) or
 * INTERNAL_SERVER_ERROR (any other lock error). No message carries the lock key. The answers are
 * logged as one rate-limited warn line (busy, unavailable) or an error with stack (other lock
 * errors), keys escaped. DistributedLockModule registers it globally (`transportErrors: false`
 * turns that off); subclass it and override a `create…` hook to answer differently.
 */
@Injectable()
export class DistributedLockTransportInterceptor implements NestInterceptor {
  /** Where answers are logged (rate-limited). */
  protected readonly answerLog = new LockAnswerLog();

  constructor(
    @Optional()
    @Inject(DISTRIBUTED_LOCK_SETTINGS)
    private readonly moduleSettings?: DistributedLockSettings,
  ) {}

  /** @internal */
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const type = context.getType<string>();
    if (!TRANSPORTS.has(type) || ANSWERING.has(context)) {
      return next.handle();
    }
    ANSWERING.add(context);
    return next.handle().pipe(
      catchError((error: unknown) => {
        const answer = this.answerFor(context, error);
        if (!answer) return throwError(() => error);
        this.answerLog.answered(type, answer.code, error);
        const mapped = this.translate(type as LockTransport, context, answer, error);
        return type === 'graphql' ? of(mapped) : throwError(() => mapped);
      }),
    );
  }

  /** What to answer for `error`; undefined for errors that are not lock errors (they pass unchanged). */
  protected answerFor(_context: ExecutionContext, error: unknown): LockErrorAnswer | undefined {
    return lockErrorAnswer(error, this.getRetryAfter());
  }

  /** The error the transport of `context` sends for `answer`. */
  protected translate(
    transport: LockTransport,
    context: ExecutionContext,
    answer: LockErrorAnswer,
    error: unknown,
  ): unknown {
    if (transport === 'graphql') return this.createGraphqlError(context, answer, error);
    if (transport === 'rpc') return this.createRpcException(context, answer, error);
    return this.createWsException(context, answer, error);
  }

  /** GraphQL: a `GraphQLError` with `extensions: { code, retryAfterMs? }`. */
  protected createGraphqlError(
    _context: ExecutionContext,
    answer: LockErrorAnswer,
    _error: unknown,
  ): unknown {
    return createGraphqlError(answer);
  }

  /** Microservices: an `RpcException` with `{ status: 'error', code, message, retryAfterMs? }`. */
  protected createRpcException(
    _context: ExecutionContext,
    answer: LockErrorAnswer,
    _error: unknown,
  ): unknown {
    return createRpcException(answer);
  }

  /** WebSockets: a `WsException` with `{ status: 'error', code, message, retryAfterMs? }`. */
  protected createWsException(_context: ExecutionContext, answer: LockErrorAnswer, _error: unknown): unknown {
    return createWsException(answer);
  }

  /** The `retryAfter` option that `retryAfterMs` follows. */
  protected getRetryAfter(): RetryAfterOption {
    return this.settings().retryAfter;
  }

  /** The settings of this module, or the defaults when registered outside it. */
  protected settings(): TransportSettings {
    return this.moduleSettings ?? DEFAULT_SETTINGS;
  }
}

/**
 * The instance DistributedLockModule registers globally: it stands aside under
 * `transportErrors: false`, and only the DistributedLockTransportInterceptor instances the app
 * registers itself answer.
 */
@Injectable()
export class ModuleTransportErrorsInterceptor extends DistributedLockTransportInterceptor {
  /** @internal */
  override intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return this.settings().transportErrors ? super.intercept(context, next) : next.handle();
  }
}
