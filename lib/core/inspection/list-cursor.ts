import { LOCK_KINDS } from '../kinds/kind-registry';
import { type LockKind } from '../options/lock-info';

/** A lock's place in list()'s order: key, then kind. */
export function listPosition(key: string, kind: LockKind): string {
  return `${key}\u0000${LOCK_KINDS.indexOf(kind)}`;
}

/** The opaque cursor for a position. */
export function encodeCursor(position: string): string {
  return Buffer.from(position, 'utf8').toString('base64url');
}

/** The position a cursor names; a TypeError when it is not one list() returned. */
export function decodeCursor(cursor: string): string {
  const position = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/\u0000[0-4]$/.test(position) || encodeCursor(position) !== cursor) {
    throw new TypeError('cursor must be a cursor returned by list()');
  }
  return position;
}
