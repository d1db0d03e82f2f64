import { BadRequestException } from '@nestjs/common';

/** Largest quantity the sample accepts anywhere (keeps arithmetic far from float limits). */
export const MAX_QUANTITY = 1_000_000_000;

/** Reads `body[field]` as a whole number within [min, MAX_QUANTITY]; otherwise a 400 naming the field. */
export function quantityField(body: unknown, field: string, min: number): number {
  const value = (body as Record<string, unknown> | undefined)?.[field];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > MAX_QUANTITY) {
    throw new BadRequestException(
      `"${field}" must be a whole number from ${min} to ${MAX_QUANTITY}, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** Reads `body[field]` as a string; otherwise a 400 naming the field. */
export function stringField(body: unknown, field: string): string {
  const value = (body as Record<string, unknown> | undefined)?.[field];
  if (typeof value !== 'string')
    throw new BadRequestException(`"${field}" must be a string, got ${JSON.stringify(value)}`);
  return value;
}
