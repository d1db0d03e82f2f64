import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { lastValueFrom, of, throwError } from 'rxjs';
import {
  DistributedLockInterceptor,
  LockedException,
  LockNotAcquiredError,
  LockRedisError,
  LockServiceClosedError,
} from '../../lib';
import { ServiceUnavailableException } from '@nestjs/common';

/** An execution context of the given type; for HTTP, a request object and a response that records headers. */
function contextOf(type: 'http' | 'rpc' | 'ws') {
  const headers: Record<string, string> = {};
  const response = { header: (name: string, value: string) => void (headers[name] = value) };
  const context = new ExecutionContextHost([{}, response, undefined]);
  context.setType(type);
  return { context, headers };
}

const failWith = (error: unknown) => ({ handle: () => throwError(() => error) });

describe('DistributedLockInterceptor', () => {
  // Constructed without module options: it falls back to the defaults (no lock service in this file).
  const interceptor = new DistributedLockInterceptor();

  it.each(['rpc', 'ws'] as const)('lets lock errors through unchanged outside HTTP (%s)', async (type) => {
    const busy = new LockNotAcquiredError('k', 10, 1500);
    const down = new LockRedisError('Redis is down', 'k');
    await expect(lastValueFrom(interceptor.intercept(contextOf(type).context, failWith(busy)))).rejects.toBe(
      busy,
    );
    await expect(lastValueFrom(interceptor.intercept(contextOf(type).context, failWith(down)))).rejects.toBe(
      down,
    );
  });

  it('turns "busy" into 423 with Retry-After rounded up to whole seconds over HTTP', async () => {
    const { context, headers } = contextOf('http');
    const busy = new LockNotAcquiredError('k', 10, 1500);
    const thrown = await lastValueFrom(interceptor.intercept(context, failWith(busy))).catch(
      (e: unknown) => e,
    );
    expect(thrown).toBeInstanceOf(LockedException);
    expect((thrown as LockedException).getStatus()).toBe(423);
    expect((thrown as LockedException).cause).toBe(busy);
    expect(headers).toEqual({ 'Retry-After': '2' });
  });

  it('turns "Redis unreachable" into 503 over HTTP', async () => {
    const down = new LockRedisError('Redis is down', 'k');
    const thrown = await lastValueFrom(
      interceptor.intercept(contextOf('http').context, failWith(down)),
    ).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(ServiceUnavailableException);
    expect((thrown as ServiceUnavailableException).cause).toBe(down);
  });

  it('turns "shutting down" into 503 over HTTP, not 423, though the error is a LockNotAcquiredError', async () => {
    const { context, headers } = contextOf('http');
    const closing = new LockServiceClosedError('shutting down', 'k');
    expect(closing).toBeInstanceOf(LockNotAcquiredError); // what a `catch` for "not acquired" still sees
    const thrown = await lastValueFrom(interceptor.intercept(context, failWith(closing))).catch(
      (e: unknown) => e,
    );
    expect(thrown).toBeInstanceOf(ServiceUnavailableException);
    expect((thrown as ServiceUnavailableException).cause).toBe(closing);
    expect(headers).toEqual({});
  });

  it('passes results and other errors through untouched', async () => {
    await expect(
      lastValueFrom(interceptor.intercept(contextOf('http').context, { handle: () => of(7) })),
    ).resolves.toBe(7);
    const other = new Error('boom');
    await expect(
      lastValueFrom(interceptor.intercept(contextOf('http').context, failWith(other))),
    ).rejects.toBe(other);
  });

  it('leaves Retry-After out when a retryAfter function answers undefined, and rounds its seconds up', async () => {
    const busy = new LockNotAcquiredError('k', 10, 1500);
    // The HTTP part of the module's settings, as the module injects them.
    const settings = (retryAfter: (e: LockNotAcquiredError) => number | undefined) =>
      new DistributedLockInterceptor({ busyStatus: 423, retryAfter, httpErrors: true } as never);
    for (const [retryAfter, expected] of [
      [() => undefined, {}],
      [() => 2.2, { 'Retry-After': '3' }],
    ] as const) {
      const { context, headers } = contextOf('http');
      const thrown = await lastValueFrom(settings(retryAfter).intercept(context, failWith(busy))).catch(
        (e: unknown) => e,
      );
      expect(thrown).toBeInstanceOf(LockedException);
      expect(headers).toEqual(expected);
    }
  });

  it('names the exception after its class', () => {
    expect(new LockedException().name).toBe('LockedException');
    expect(new LockedException().getStatus()).toBe(423);
  });
});
