/*
 * The interceptor layers a call crosses: the module's one global interceptor answers every context
 * type as the HTTP one and the transport one did when both were registered, and @DistributedLock()
 * binds its transport interceptor on a method only where a transport other than HTTP may call it.
 */
import { Controller, Get, HttpException, Injectable, Logger, Post, UseInterceptors } from '@nestjs/common';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { MessagePattern, RpcException } from '@nestjs/microservices';
import { SubscribeMessage, WebSocketGateway, WsException } from '@nestjs/websockets';
import { lastValueFrom, Observable, of, throwError } from 'rxjs';
import {
  DistributedLock,
  LockError,
  LockNotAcquiredError,
  LockRedisError,
  LockServiceClosedError,
} from '../../lib';
import { assertLockKey } from '../../lib/core/options/validation';
import { ModuleHttpErrorsInterceptor } from '../../lib/nest/distributed-lock.interceptor';
import { ModuleLockErrorsInterceptor } from '../../lib/nest/module-errors.interceptor';
import type { DistributedLockSettings } from '../../lib/nest/module-options';
import { ModuleTransportErrorsInterceptor } from '../../lib/nest/transports/distributed-lock-transport.interceptor';

type ContextType = 'http' | 'rpc' | 'ws' | 'graphql';

/** A fresh context of `type`; for HTTP, a request and a response that records its headers. */
function contextOf(type: ContextType) {
  const headers: Record<string, string> = {};
  const response = { header: (name: string, value: string) => void (headers[name] = value) };
  const context = new ExecutionContextHost([{}, response, undefined]);
  context.setType(type);
  return { context, headers };
}

/** What a call answers: its value or error (as thrown), and the headers set. */
async function outcome(
  type: ContextType,
  run: (context: ExecutionContextHost) => Observable<unknown>,
): Promise<{ value?: unknown; error?: unknown; headers: Record<string, string> }> {
  const { context, headers } = contextOf(type);
  return lastValueFrom(run(context)).then(
    (value) => ({ value, headers }),
    (error: unknown) => ({ error, headers }),
  );
}

/** An error as an answer compares: its class, status and payload. */
function shape(answer: { value?: unknown; error?: unknown; headers: Record<string, string> }) {
  const describe = (e: unknown) =>
    e instanceof HttpException
      ? { class: e.constructor.name, status: e.getStatus(), body: e.getResponse() }
      : e instanceof RpcException || e instanceof WsException
        ? { class: e.constructor.name, body: e.getError() }
        : e instanceof Error
          ? {
              class: e.constructor.name,
              message: e.message,
              extensions: (e as { extensions?: unknown }).extensions,
            }
          : e;
  return { value: describe(answer.value), error: describe(answer.error), headers: answer.headers };
}

const settings = (over: Partial<DistributedLockSettings>) =>
  ({
    busyStatus: 423,
    retryAfter: true,
    httpErrors: true,
    transportErrors: true,
    ...over,
  }) as DistributedLockSettings;

describe('the module-wide interceptor', () => {
  // The transport answers are logged (warn, error): not wanted in this file's output.
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose', 'fatal']));

  const keyError = () => {
    try {
      assertLockKey('');
    } catch (error) {
      return error as Error;
    }
    throw new Error('the empty key was accepted');
  };
  // One of each answer: busy, Redis down, shutting down, a refused key, another lock error, no lock error.
  const errors = () => [
    new LockNotAcquiredError('secret-key', 10, 1500),
    new LockRedisError('Redis is down', 'secret-key'),
    new LockServiceClosedError('shutting down', 'secret-key'),
    keyError(),
    new LockError('another lock error'),
    new Error('not a lock error'),
  ];
  const switches: Partial<DistributedLockSettings>[] = [
    {},
    { httpErrors: false },
    { transportErrors: false },
    { httpErrors: false, transportErrors: false },
  ];

  it.each(['http', 'rpc', 'ws', 'graphql'] as const)(
    'answers a %s call as the HTTP and transport interceptors did one after the other',
    async (type) => {
      for (const over of switches) {
        const one = new ModuleLockErrorsInterceptor(settings(over));
        const http = new ModuleHttpErrorsInterceptor(settings(over));
        const transport = new ModuleTransportErrorsInterceptor(settings(over));
        for (const [mine, theirs] of errors().map((e, i) => [e, errors()[i]!] as const)) {
          const folded = await outcome(type, (c) =>
            one.intercept(c, { handle: () => throwError(() => mine) }),
          );
          const chained = await outcome(type, (c) =>
            http.intercept(c, {
              handle: () => transport.intercept(c, { handle: () => throwError(() => theirs) }),
            }),
          );
          expect(shape(folded)).toEqual(shape(chained));
        }
        const passed = await outcome(type, (c) => one.intercept(c, { handle: () => of('done') }));
        expect(passed.value).toBe('done');
      }
    },
  );
});

// ---- the decorator's own transport interceptor ----

const INTERCEPTORS = '__interceptors__';
const bound = (method: unknown) => (Reflect.getMetadata(INTERCEPTORS, method as object) ?? []) as unknown[];
/** Class decorators and the other method decorators have run once a microtask has passed. */
const decorated = () => new Promise<void>((resolve) => queueMicrotask(resolve));

@Injectable()
class Audit {
  intercept(_c: unknown, next: { handle(): Observable<unknown> }) {
    return next.handle();
  }
}

@Controller('orders')
class OrdersController {
  @Post(':id')
  @DistributedLock({ key: 'order:{0}' })
  async place(id: string) {
    return id;
  }

  @DistributedLock({ key: 'order:{0}' })
  @UseInterceptors(Audit)
  @Get(':id')
  async read(id: string) {
    return id;
  }

  @MessagePattern('order.place')
  @DistributedLock({ key: 'order:{0}' })
  async placeByMessage(id: string) {
    return id;
  }

  @DistributedLock({ key: 'order:{0}' })
  async notARoute(id: string) {
    return id;
  }
}

@WebSocketGateway()
class OrdersGateway {
  @SubscribeMessage('place')
  @DistributedLock({ key: 'order:{0}' })
  async place(id: string) {
    return id;
  }
}

@Injectable()
class OrdersService {
  @DistributedLock({ key: 'order:{0}' })
  async place(id: string) {
    return id;
  }
}

describe("@DistributedLock()'s transport interceptor", () => {
  it('is not bound on a plain HTTP route, and the route keeps its own interceptors', async () => {
    await decorated();
    expect(bound(OrdersController.prototype.place)).toEqual([]);
    expect(bound(OrdersController.prototype.read)).toEqual([Audit]);
  });

  it('stays where another transport or a direct caller may call the method', async () => {
    await decorated();
    expect(bound(OrdersController.prototype.placeByMessage)).toContain(ModuleTransportErrorsInterceptor);
    expect(bound(OrdersController.prototype.notARoute)).toContain(ModuleTransportErrorsInterceptor);
    expect(bound(OrdersGateway.prototype.place)).toContain(ModuleTransportErrorsInterceptor);
    expect(bound(OrdersService.prototype.place)).toContain(ModuleTransportErrorsInterceptor);
  });
});
