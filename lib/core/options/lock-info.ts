/**
 * The kind of a lock as inspection names it: `mutex` (reentrant, the default), `token` (`reentrant:
 * false`), `read-write` (`mode`), `fair` (`fair: true`) or `semaphore` (`limit`).
 */
export type LockKind = 'mutex' | 'token' | 'read-write' | 'fair' | 'semaphore';

/** The process (engine) behind a holder or a waiter. */
export interface LockOwner {
  /** The engine id: the prefix of every owner id this engine writes to Redis. */
  engine: string;
  /** `os.hostname()` of its process ('' when that engine has not reported itself). */
  host: string;
  /** Its process id (0 when unknown). */
  pid: number;
  /** The `app` engine option (default: the app's package name, or the host). */
  app: string;
}

/** One holder of a lock. */
export interface LockHolder {
  owner: LockOwner;
  /** When the holder got the lock (epoch ms, its own clock; 0 when its process has not reported it yet). */
  acquiredAt: number;
  /** When its lease ends unless renewed (epoch ms, by the Redis server clock). */
  expiresAt: number;
  /** The holder's fencing token (0 when not known: a reader or permit whose process has not reported it yet). */
  fencingToken: number;
  /** Open holds: 1 plus nested re-entries. */
  holdCount: number;
  /** Semaphore: the permits this holder has. */
  permits?: number;
  /** Read-write lock: whether this holder reads or writes. */
  mode?: 'read' | 'write';
}

/** What inspect() and list() report for one held lock. */
export interface LockInfo {
  key: string;
  kind: LockKind;
  holders: LockHolder[];
  /** Callers waiting for this lock, in total and by owner label (`app@host#pid`). */
  waiters: { total: number; byOwner: Record<string, number> };
}

/** Options of isLocked() and inspect(). */
export interface InspectLockOptions {
  /** Only this kind; default every kind (inspect() reports the first one held, in LOCK_KINDS order). */
  kind?: LockKind;
}

/** Options of list(). */
export interface ListLocksOptions {
  /** A glob on the user key (`*`, `?`, `[abc]`, `\` escapes); default every key. */
  match?: string;
  kind?: LockKind;
  /** At most this many locks per page (1 to 1000). Default 100. */
  limit?: number;
  /** The `cursor` of the previous page. */
  cursor?: string;
}

/** One page of list(): `cursor` is set when there may be more. */
export interface ListLocksResult {
  locks: LockInfo[];
  cursor?: string;
}

/** Options of forceRelease(). */
export interface ForceReleaseOptions {
  /** Only this kind; default every kind held on the key. */
  kind?: LockKind;
  /** Why (required): kept in the audit entry and told to the evicted holder. */
  reason: string;
  /** Who (an operator, a user id); default `<app>@<host>#<pid>` of the caller. */
  by?: string;
}

/** One audit entry of a force release (the capped stream, the `forceReleased` event, the logs). */
export interface ForceReleaseRecord {
  /** The stream entry id ('' in the event, before it is written). */
  id: string;
  key: string;
  kind: LockKind;
  reason: string;
  by: string;
  /** Epoch ms of the release. */
  at: number;
  /** The fencing token the key's counter was advanced to: every later grant gets a higher one. */
  fence: number;
  /** The evicted holders: owner label, owner, and their fencing token (0 when not known). */
  evicted: { label: string; owner: LockOwner; fencingToken: number }[];
}

/** Options of forceReleases(): the newest audit entries first. */
export interface ForceReleaseLogOptions {
  /** Only entries of this key. */
  key?: string;
  /** At most this many (1 to 1000). Default 50. */
  limit?: number;
}

/** The label of an owner in `waiters.byOwner` and in logs. */
export function ownerLabel(owner: LockOwner): string {
  return owner.host ? `${owner.app}@${owner.host}#${owner.pid}` : `engine:${owner.engine}`;
}
