import { BadRequestException, Injectable, PipeTransform } from '@nestjs/common';

const ID = /^[A-Za-z0-9_.-]{1,64}$/;

/** Accepts item ids and SKUs of 1–64 letters, digits, `_`, `.` or `-`; anything else is a 400. */
@Injectable()
export class ParseIdPipe implements PipeTransform<unknown, string> {
  transform(value: unknown): string {
    if (typeof value !== 'string' || !ID.test(value)) {
      throw new BadRequestException(
        `Ids are 1 to 64 characters from [A-Za-z0-9_.-], got ${JSON.stringify(value)}`,
      );
    }
    return value;
  }
}
