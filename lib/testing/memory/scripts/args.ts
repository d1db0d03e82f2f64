import { tonumber } from './lua';

/** args.lua: check_ms(). An argument out of range is an error reply, raised before anything is written. */
export function checkMs(value: string | undefined, name: string, min = 1): number {
  const n = tonumber(value);
  if (n === undefined || n !== Math.floor(n) || n < min || n > 2147483647) {
    throw new Error(`ERR invalid ${name}: ${value ?? 'nil'}`);
  }
  return n;
}
