import { LockUpgradeError, LockWrongTypeError } from '../errors';
import type { LockKind as InspectedKind } from '../options/lock-info';
import type { LockOptions } from '../options/lock-options';
import type { ScriptCall, ScriptRunner } from '../redis/redis-gateway';
import type { LuaScript } from '../redis/script-library';

/*
 * What a lock kind is, in one place: the contract every kind class implements (attempt, release,
 * renew), the table of kinds that options choose from, the Redis names of one lock of a kind, and
 * the replies its scripts send back. The kind classes (reentrant-mutex, token-lock, read-write-lock,
 * fair-lock, semaphore) each hold one kind's behaviour; everything they share is here.
 */

// ---- The contract of a kind ----

/** One attempt to take (or re-enter) a lock. */
export interface AttemptRequest {
  readonly key: string;
  readonly names: LockKeyNames;
  readonly owner: string;
  readonly holdId: string;
  readonly leaseMs: number;
  /** True when this async context already holds the lock with `owner`: re-enter, never a fresh grant. */
  readonly reenter: boolean;
  readonly options: LockOptions;
  /** Fencing tokens a fresh grant reserves (kinds with `cohorts`): its own plus those for local hand-offs. */
  readonly reserveTokens?: number;
  /** The caller's process (engine) id, the prefix of its owner ids. */
  readonly process?: string;
  /** The process may be recorded as a waiter of this lock (a busy attempt): a grant removes it. */
  readonly recordedWaiting?: boolean;
  /** The attempt's command settles within this (capped by the command timeout); default: that timeout. */
  readonly timeoutMs?: number;
}

/** What an attempt got. */
export type AttemptResult =
  | { status: 'granted'; fencingToken: number; reentered: boolean; replicaAcks?: number }
  /** `reason`: why, when it is more than "held by another owner" (e.g. a RedLock split vote). */
  | { status: 'busy'; retryAfterMs: number; reason?: string }
  /** Re-entry was asked, but Redis no longer has this owner's lock. */
  | { status: 'not-held' };

/** Identifies one hold of one grant. */
export interface HoldRef {
  readonly key: string;
  readonly names: LockKeyNames;
  readonly owner: string;
  readonly holdId: string;
  readonly options: LockOptions;
  /** The last release of a cohort at its bound: keep this process out for `ms` (kinds that can). */
  readonly yieldTo?: { readonly process: string; readonly ms: number };
}

/** `released`: the lock is free now; `still-held`: nested holds remain; `not-held`: nothing was ours. */
export type ReleaseResult = 'released' | 'still-held' | 'not-held';

/** One lease to renew. */
export interface RenewRequest extends HoldRef {
  readonly leaseMs: number;
  /** The renewal settles within this (capped by the command timeout): the lease left, locally. */
  readonly timeoutMs?: number;
  /** The grant's open holds (first the base hold): RedLock recreates them on a node that lost the lock. */
  readonly holdIds?: readonly string[];
}

/** `gone`: expired or deleted; `taken-over`: another owner holds it now. */
export type RenewResult = 'renewed' | 'gone' | 'taken-over';

/**
 * A lock kind (mutex, token lock, read-write, fair, semaphore, RedLock...): the Redis side of
 * acquire, release and renew. The engine owns waiting, leases, the watchdog, context and handles.
 */
export interface LockKind {
  /** Part of the Redis key name; kinds with the same tag exclude each other. */
  readonly tag: LockKindTag;
  /** True: only the local head waiter attempts; false: every local waiter may (shared holders). */
  readonly exclusive: boolean;
  /** Whether the same async context may take it again. */
  readonly reentrant: boolean;
  /** True when grants can reserve fencing tokens, so a release may hand the lock to a local waiter. */
  readonly cohorts?: boolean;
  /**
   * Kinds whose releases wake one waiter by owner id (`@<owner>`: the fair lock's queue head): other
   * waiters sleep up to this long between attempts (which keep their place), not the backoff cap.
   */
  readonly directedWakeupSleepMs?: number;
  attempt(request: AttemptRequest): Promise<AttemptResult>;
  release(hold: HoldRef): Promise<ReleaseResult>;
  /** Renews many leases in as few round trips as the topology allows. */
  renew(requests: readonly RenewRequest[]): Promise<RenewResult[]>;
  /** Per-request exclusivity when it depends on the options (read-write: writers exclusive, readers shared). */
  isExclusive?(options: LockOptions): boolean;
  /**
   * Called once when a waiter gives up (timeout, abort, error, shutdown) after at least one attempt,
   * for kinds that keep waiters in Redis (fair queue, writer-waiting marker). Must not throw.
   */
  abandon?(request: AttemptRequest): Promise<void>;
}

// ---- The table of kinds ----

/** What options choose: one row of KINDS. */
export type KindName = 'mutex' | 'token' | 'read' | 'write' | 'fair' | 'semaphore';

/** One kind's names: where its instance sits in a backend, its Redis tag, and what inspection and events call it. */
export interface KindRow {
  /** The backend's instance that serves it (read and write share the read-write lock). */
  readonly impl: keyof LockKinds;
  /** Part of the Redis key names; kinds with the same tag exclude each other (mutex and token). */
  readonly tag: LockKindTag;
  /** Its name in inspect(), list() and the registry. */
  readonly inspection: InspectedKind;
  /** Its name in events and metrics (`kind`). */
  readonly event: KindName;
  /** The option that chooses it (named when a backend does not offer it). */
  readonly option?: 'mode' | 'fair' | 'limit';
}

/** Every kind, in one table: the only place a kind's tag and names are written down. */
export const KINDS: Readonly<Record<KindName, KindRow>> = {
  mutex: { impl: 'mutex', tag: 'm', inspection: 'mutex', event: 'mutex' },
  token: { impl: 'token', tag: 'm', inspection: 'token', event: 'token' },
  read: { impl: 'readWrite', tag: 'rw', inspection: 'read-write', event: 'read', option: 'mode' },
  write: { impl: 'readWrite', tag: 'rw', inspection: 'read-write', event: 'write', option: 'mode' },
  fair: { impl: 'fair', tag: 'fair', inspection: 'fair', event: 'fair', option: 'fair' },
  semaphore: { impl: 'semaphore', tag: 'sem', inspection: 'semaphore', event: 'semaphore', option: 'limit' },
};

/** Every Redis key tag, once each, in the order of KINDS: m, rw, fair, sem. */
export const KIND_TAG_LIST: readonly LockKindTag[] = [...new Set(Object.values(KINDS).map((row) => row.tag))];

/** The kind validated options ask for. */
export function kindOf(opts: LockOptions): KindRow {
  if (opts.mode !== undefined) return opts.mode === 'write' ? KINDS.write : KINDS.read;
  if (opts.fair) return KINDS.fair;
  if (opts.limit !== undefined) return KINDS.semaphore;
  return opts.reentrant === false ? KINDS.token : KINDS.mutex;
}

/** The lock kinds a backend offers; a missing one is refused with a clear error. */
export interface LockKinds {
  mutex: LockKind;
  token: LockKind;
  readWrite?: LockKind;
  fair?: LockKind;
  semaphore?: LockKind;
}

/** Picks a backend's kind for validated options. */
export class KindRegistry {
  constructor(
    private readonly kinds: LockKinds,
    private readonly backendName: string,
  ) {}

  kindFor(opts: LockOptions): LockKind {
    const row = kindOf(opts);
    const found = this.kinds[row.impl];
    if (!found) throw new TypeError(`The "${row.option!}" option is not supported with ${this.backendName}`);
    return found;
  }
}

// ---- The Redis names of one lock ----

/**
 * Names every Redis key and channel of one lock. All of them carry the same hash tag, so on a
 * Cluster they live in one slot (no CROSSSLOT, one node for lock, fence and channel).
 *
 * The tag is the user key with `%`, `{` and `}` percent-encoded: the mapping stays one-to-one and
 * user text can never open or close a hash tag early (an empty tag `{}` would scatter the keys).
 */
export class KeySpace {
  /** Names already built, per kind tag: a hot key costs a map lookup, not four strings and a regex. */
  private readonly built = new Map<LockKindTag, Map<string, LockKeyNames>>();

  constructor(readonly prefix: string) {}

  /** The hash-tagged stem shared by every key of `key`'s lock. */
  stem(key: string): string {
    return `${this.prefix}{${encodeTag(key)}}`;
  }

  /**
   * Names for one lock of the given kind. The kinds are separate namespaces: `m` (mutex and token
   * lock, which exclude each other), `rw`, `fair` and `sem` are four different locks on one key.
   */
  names(key: string, kind: LockKindTag = 'm'): LockKeyNames {
    let cache = this.built.get(kind);
    if (!cache) this.built.set(kind, (cache = new Map()));
    let names = cache.get(key);
    if (!names) {
      // Bounded: a process that locks ever new keys keeps at most NAMES_KEPT of them per kind.
      if (cache.size >= NAMES_KEPT) cache.clear();
      cache.set(key, (names = this.build(key, kind)));
    }
    return names;
  }

  private build(key: string, kind: LockKindTag): LockKeyNames {
    const stem = this.stem(key);
    return Object.freeze({
      lock: `${stem}:${kind}`,
      // One fencing counter per lock: the mutex and token lock share `m` (they exclude each other),
      // every other kind is a lock of its own with its own counter, so a cohort's reserved tokens
      // never interleave with another kind's grants (docs/GUARANTEES.md, "One key, one lock per kind").
      fence: kind === 'm' ? `${stem}:fence` : `${stem}:fence:${kind}`,
      channel: `${stem}:${kind}:ch`,
      aux: `${stem}:${kind}:aux`,
    });
  }
}

/** Lock names KeySpace keeps built per kind tag. */
const NAMES_KEPT = 1024;

/** Short tags of the lock kinds; part of each Redis key name. */
export type LockKindTag = 'm' | 'rw' | 'fair' | 'sem';

/** The Redis names one lock uses. `aux` is a second structure some kinds need (queue, permits). */
export interface LockKeyNames {
  readonly lock: string;
  readonly fence: string;
  readonly channel: string;
  readonly aux: string;
}

function encodeTag(key: string): string {
  return key.replace(/[%{}]/g, (c) => (c === '%' ? '%25' : c === '{' ? '%7B' : '%7D'));
}

// ---- What the scripts reply ----

/** 'PUBLISH', or 'SPUBLISH' on a Redis 7 Cluster (sharded pub/sub). */
export type PublishCommand = 'PUBLISH' | 'SPUBLISH';

/**
 * The reply of every acquire script: {1, token} granted, {2, token} re-entered, {0, pttl} busy,
 * {-2} re-entry of a lock no longer held, {-3} a pure reader asked to write (upgrade refused),
 * {-1, type, i} foreign data at the lock's i-th key (1 when absent).
 */
export type AttemptReply =
  [code: 1 | 2 | 0, value: number] | [code: -2] | [code: -3] | [code: -1, type: string, index?: number];

/**
 * ARGV of mutex-release.lua (the mutex and the fair lock's holder): '1' = always publish (the fair
 * lock), and a cohort's bound; left out when they hold their defaults.
 */
export type MutexReleaseArgs = [
  ...HoldReleaseArgs,
  ...([] | [alwaysPublish: '1'] | [alwaysPublish: '0' | '1', keepOut: string, keepOutMs: number]),
];

/** 1 released (lock gone), 2 this hold removed but nested holds remain, 0 not held. */
export type HoldReleaseReply = 0 | 1 | 2;

/** ARGV of every per-hold release script (mutex, fair, read-write, semaphore). */
export type HoldReleaseArgs = [owner: string, holdId: string, channel: string, publish: PublishCommand];

/** Per request of a renew script: 1 renewed, 0 gone, -1 taken over. */
export type RenewReply = (1 | 0 | -1)[];

/** Decodes an acquire reply; `redisKeys` are the lock's keys in script order (for foreign-data errors). */
export function decodeAttemptReply(
  reply: AttemptReply,
  key: string,
  redisKeys: readonly string[],
): AttemptResult {
  switch (reply[0]) {
    case 1:
      return { status: 'granted', fencingToken: Number(reply[1]), reentered: false };
    case 2:
      return { status: 'granted', fencingToken: Number(reply[1]), reentered: true };
    case 0:
      return { status: 'busy', retryAfterMs: Number(reply[1]) };
    case -2:
      return { status: 'not-held' };
    case -3:
      throw new LockUpgradeError(key);
    default: {
      const redisKey = redisKeys[(reply[2] ?? 1) - 1] ?? redisKeys[0]!;
      const what = redisKeys.length > 1 ? "this lock's data" : 'a lock';
      throw new LockWrongTypeError(
        key,
        redisKey,
        `holds a ${String(reply[1])} without a lease, which is not ${what}`,
      );
    }
  }
}

/** What a reply that arrived after its command timed out asks for: undo a grant, or leave the queue. */
export function lateReplyAction(reply: AttemptReply): 'release' | 'abandon' | 'none' {
  const code = Array.isArray(reply) ? reply[0] : undefined;
  return code === 1 || code === 2 ? 'release' : code === 0 ? 'abandon' : 'none';
}

/**
 * The call options of a queuing kind's attempt (read-write, fair, semaphore): a reply that comes
 * after the deadline is undone — a late grant released, a late place in the queue abandoned.
 */
export function queuedAttemptCall(
  kind: { release(h: HoldRef): Promise<unknown>; abandon(r: AttemptRequest): Promise<void> },
  r: AttemptRequest,
): ScriptCall<AttemptReply> {
  return {
    userKey: r.key,
    onLateReply: (late) => {
      const action = lateReplyAction(late);
      if (action === 'release') kind.release(r).catch(() => undefined);
      if (action === 'abandon') void kind.abandon(r);
    },
    timeoutMs: r.timeoutMs,
  };
}

/** Runs a per-hold release script on the lock's keys (lock, aux) and decodes its reply. */
export async function releaseHold(
  gateway: ScriptRunner,
  script: LuaScript<HoldReleaseArgs, HoldReleaseReply>,
  h: HoldRef,
): Promise<ReleaseResult>;
export async function releaseHold(
  gateway: ScriptRunner,
  script: LuaScript<MutexReleaseArgs, HoldReleaseReply>,
  h: HoldRef,
  alwaysPublish: '0' | '1',
): Promise<ReleaseResult>;
export async function releaseHold(
  gateway: ScriptRunner,
  script: LuaScript<HoldReleaseArgs, HoldReleaseReply> | LuaScript<MutexReleaseArgs, HoldReleaseReply>,
  h: HoldRef,
  alwaysPublish?: '0' | '1',
): Promise<ReleaseResult> {
  const { names } = h;
  const args: (string | number)[] = [h.owner, h.holdId, names.channel, gateway.publishCommand];
  // mutex-release.lua's optional arguments, sent only when they are not their defaults.
  if (alwaysPublish !== undefined && h.yieldTo) args.push(alwaysPublish, h.yieldTo.process, h.yieldTo.ms);
  else if (alwaysPublish === '1') args.push('1');
  const reply = await gateway.run(
    script as LuaScript<(string | number)[], HoldReleaseReply>,
    [names.lock, names.aux],
    args,
    { userKey: h.key },
  );
  return reply === 1 ? 'released' : reply === 2 ? 'still-held' : 'not-held';
}
