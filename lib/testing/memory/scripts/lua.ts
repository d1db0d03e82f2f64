import type { MemoryStore } from '../memory-store';

/**
 * A value as a Lua script holds it: `null` is what a Redis command answers for nil (Lua's false),
 * `undefined` is Lua's nil (an array reply ends at the first one, as a Lua table's length does).
 */
export type LuaValue = number | string | boolean | null | undefined | LuaValue[];

/**
 * The TypeScript port of one Lua script of lib/core/scripts, kept line by line beside its Lua.
 * KEYS and ARGV are indexed from 1 as in Lua (index 0 is unused), ARGV as the strings Redis passes.
 */
export type ScriptPort = (redis: MemoryStore, KEYS: readonly string[], ARGV: string[]) => LuaValue;

/** `#KEYS` / `#ARGV` of a 1-indexed array. */
export function count(list: readonly string[]): number {
  return list.length - 1;
}

/** Lua's tonumber(): undefined (nil) for nil, false and text that is not a number. */
export function tonumber(value: string | number | null | undefined): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return undefined;
  // Number() ignores the blanks around a number as trim() does, and reads blank text as 0 (nil here).
  const n = Number(value);
  if (Number.isNaN(n) || (n === 0 && value.trim() === '')) return undefined;
  return n;
}

/** string.format('%.0f', n): integers as plain digits (never 1.7e+15). */
export function fmt(n: number): string {
  return n.toFixed(0);
}

/** redis.pcall(): the command's answer, or Redis' error table `{ err }` instead of a raised error. */
export function pcall<T>(command: () => T): T | { err: string } {
  try {
    return command();
  } catch (err) {
    return { err: err instanceof Error ? err.message : String(err) };
  }
}

/** True when a pcall() answered an error table. */
export function isError(value: unknown): value is { err: string } {
  return typeof value === 'object' && value !== null && 'err' in value;
}

/**
 * What Redis makes of a script's return value (and what ioredis hands the kinds): a number becomes
 * an integer (truncated), false and nil become nil (null), true becomes 1, a table an array that
 * ends at its first nil.
 */
export function toRedisReply(value: LuaValue): unknown {
  if (typeof value === 'number') return Math.trunc(value);
  if (value === true) return 1;
  if (value === false || value === null || value === undefined) return null;
  if (Array.isArray(value)) {
    const end = value.indexOf(undefined);
    return (end < 0 ? value : value.slice(0, end)).map(toRedisReply);
  }
  return value;
}
