import { assertLockKey, assertKnownNames } from '../options/validation';
import { describe } from '../errors/message-text';
import { LOCK_KINDS } from '../kinds/kind-registry';
import {
  type ForceReleaseLogOptions,
  type ForceReleaseOptions,
  type InspectLockOptions,
  type ListLocksOptions,
  type LockKind,
} from '../options/lock-info';

// Every check runs before any Redis command: bad input never costs a round trip.

/** Longest `reason` and `by` of a force release, in characters. */
export const MAX_REASON_LENGTH = 500;
/** Longest `match` glob of list(), in characters. */
const MAX_MATCH_LENGTH = 1024;
/** Default and largest page of list(). */
export const DEFAULT_LIST_LIMIT = 100;
const MAX_LIST_LIMIT = 1000;

function assertOptionsObject(value: unknown, where: string): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`The ${where} must be an object, got ${describe(value)}`);
  }
  return value as Record<string, unknown>;
}

function assertKind(kind: unknown): asserts kind is LockKind | undefined {
  if (kind !== undefined && !LOCK_KINDS.includes(kind as LockKind)) {
    throw new TypeError(`kind must be one of ${LOCK_KINDS.join(', ')}, got ${describe(kind)}`);
  }
}

function assertLimit(limit: unknown, max: number): void {
  if (limit === undefined) return;
  if (typeof limit !== 'number') throw new TypeError(`limit must be a number, got ${describe(limit)}`);
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    throw new RangeError(`limit must be a whole number from 1 to ${max}, got ${limit}`);
  }
}

/** Checks isLocked()/inspect() arguments; returns the options' own values. */
export function inspectArgs(key: unknown, options: unknown): InspectLockOptions {
  assertLockKey(key);
  const o = assertOptionsObject(options, 'inspection options');
  assertKnownNames(o, ['kind'], 'inspection options');
  const kind = o.kind;
  assertKind(kind);
  return { kind };
}

/** Checks list() options; returns their own values. */
export function listArgs(options: unknown): ListLocksOptions & { limit: number } {
  const o = assertOptionsObject(options, 'list options');
  assertKnownNames(o, ['match', 'kind', 'limit', 'cursor'], 'list options');
  const { match, kind, limit, cursor } = o;
  if (match !== undefined) {
    if (typeof match !== 'string') throw new TypeError(`match must be a string, got ${describe(match)}`);
    if (match.length === 0 || match.length > MAX_MATCH_LENGTH) {
      throw new RangeError(`match must be 1 to ${MAX_MATCH_LENGTH} characters long`);
    }
  }
  assertKind(kind);
  assertLimit(limit, MAX_LIST_LIMIT);
  if (cursor !== undefined && typeof cursor !== 'string') {
    throw new TypeError(`cursor must be a string returned by list(), got ${describe(cursor)}`);
  }
  return {
    match: match as string | undefined,
    kind,
    limit: (limit as number | undefined) ?? DEFAULT_LIST_LIMIT,
    cursor: cursor as string | undefined,
  };
}

/** Checks forceRelease() arguments; returns the options' own values. */
export function forceReleaseArgs(key: unknown, options: unknown): ForceReleaseOptions {
  assertLockKey(key);
  if (options === undefined) {
    throw new TypeError('forceRelease() needs options with a reason: { reason: "why" }');
  }
  const o = assertOptionsObject(options, 'force release options');
  assertKnownNames(o, ['kind', 'reason', 'by'], 'force release options');
  const { kind, reason, by } = o;
  assertKind(kind);
  assertText(reason, 'reason');
  if (by !== undefined) assertText(by, 'by');
  return { kind, reason: reason as string, by: by as string | undefined };
}

/** Checks forceReleases() options. */
export function auditArgs(options: unknown): { key?: string; limit: number } {
  const o = assertOptionsObject(options, 'force release log options');
  assertKnownNames(o, ['key', 'limit'], 'force release log options');
  if (o.key !== undefined) assertLockKey(o.key);
  assertLimit(o.limit, MAX_LIST_LIMIT);
  return {
    key: o.key as string | undefined,
    limit: (o.limit as number | undefined) ?? 50,
  } satisfies ForceReleaseLogOptions;
}

function assertText(value: unknown, name: string): asserts value is string {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string, got ${describe(value)}`);
  if (value.trim().length === 0) throw new RangeError(`${name} must not be empty`);
  if (value.length > MAX_REASON_LENGTH) {
    throw new RangeError(`${name} must be at most ${MAX_REASON_LENGTH} characters, got ${value.length}`);
  }
}
