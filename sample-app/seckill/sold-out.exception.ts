import { HttpException, HttpStatus } from '@nestjs/common';

/** 409: the item has no stock left. An expected answer under load, not a server error. */
export class SoldOutException extends HttpException {
  constructor(readonly itemId: string) {
    super(
      { statusCode: HttpStatus.CONFLICT, error: 'Sold Out', message: `Item "${itemId}" is sold out`, itemId },
      HttpStatus.CONFLICT,
    );
    this.name = 'SoldOutException';
  }
}
