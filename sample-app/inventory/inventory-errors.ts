import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { StaleFenceError as FencingStaleFenceError } from '../../lib/fencing';
import { StaleFenceError } from './fenced-store';

/** 409: a transfer asked for more units than the source SKU holds. */
export class InsufficientStockException extends HttpException {
  constructor(sku: string, available: number, requested: number) {
    super(
      {
        statusCode: HttpStatus.CONFLICT,
        error: 'Insufficient Stock',
        message: `SKU "${sku}" holds ${available}, ${requested} requested`,
      },
      HttpStatus.CONFLICT,
    );
    this.name = 'InsufficientStockException';
  }
}

/**
 * Turns a write refused by the fenced store (Redis: FencedStore's error; PostgreSQL: the fencing
 * helpers' StaleFenceError) into 409: the request's lock was lost before it wrote.
 */
@Catch(StaleFenceError, FencingStaleFenceError)
export class StaleFenceFilter implements ExceptionFilter<StaleFenceError | FencingStaleFenceError> {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(error: StaleFenceError | FencingStaleFenceError, host: ArgumentsHost): void {
    const body = { statusCode: HttpStatus.CONFLICT, error: 'Stale Write', message: error.message };
    this.adapterHost.httpAdapter.reply(host.switchToHttp().getResponse(), body, HttpStatus.CONFLICT);
  }
}
