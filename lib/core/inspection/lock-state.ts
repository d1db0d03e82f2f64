import type { LockKind } from '../options/lock-info';
import { engineOf } from './owner-identity';

/** The reply of inspect.lua (see its header). */
export type InspectReply = [
  now: number,
  fence: string,
  mType: string,
  mContents: string[],
  mPttl: number,
  mWaiters: string[],
  rwHash: string[],
  rwHolders: string[],
  fairHash: string[],
  fairPttl: number,
  fairQueue: string[],
  fairDeadlines: string[],
  semHash: string[],
  semHolders: string[],
];

/** One holder as Redis knows it. */
export interface RawHolder {
  ownerId: string;
  expiresAt: number;
  /** 0 when Redis does not keep it (readers, permits, the token lock). */
  fencingToken: number;
  holdCount: number;
  permits?: number;
  mode?: 'read' | 'write';
}

/** One kind of one key as Redis has it: its holders and the waiters Redis records, by engine id. */
export interface KindState {
  kind: LockKind;
  lockName: string;
  holders: RawHolder[];
  waitersByEngine: Map<string, number>;
}

/** The Redis names inspect.lua reads for one key, per kind. */
export interface InspectNames {
  m: string;
  rw: string;
  fair: string;
  sem: string;
}

const pairs = (flat: readonly string[]): [string, string][] => {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
};

const bump = (map: Map<string, number>, engine: string, by = 1): void => {
  map.set(engine, (map.get(engine) ?? 0) + by);
};

/** Decodes inspect.lua's reply into the kinds held on the key (expired holders left out). */
export function decodeLockState(reply: InspectReply, names: InspectNames): KindState[] {
  const [now, , mType, mContents, mPttl, mWaiters, rwHash, rwHolders, fairHash, fairPttl, fairQueue] = reply;
  const [, , , , , , , , , , , fairDeadlines, semHash, semHolders] = reply;
  const states: KindState[] = [];

  const mutexWaiters = new Map<string, number>();
  for (const [process] of pairs(mWaiters)) bump(mutexWaiters, engineOf(process));
  if (mType === 'hash' && mPttl > 0) {
    const hash = new Map(pairs(mContents));
    const owner = hash.get('owner');
    if (owner) {
      states.push({
        kind: 'mutex',
        lockName: names.m,
        holders: [
          {
            ownerId: owner,
            expiresAt: now + mPttl,
            fencingToken: Number(hash.get('fence') ?? 0),
            // `n` counts the mutex's holds; the fair lock's holder has only owner, fence and one field per hold.
            holdCount: Number(hash.get('n') ?? hash.size - 2),
          },
        ],
        waitersByEngine: mutexWaiters,
      });
    }
  } else if (mType === 'string' && mPttl > 0 && mContents[0]) {
    // A mutex of one hold is the string '<owner> <hold id> <token>[ w]'; a token lock only '<owner>'.
    const single = /^(\S+) \S+ (\d+)/.exec(mContents[0]);
    if (single) {
      states.push({
        kind: 'mutex',
        lockName: names.m,
        holders: [
          { ownerId: single[1]!, expiresAt: now + mPttl, fencingToken: Number(single[2]), holdCount: 1 },
        ],
        waitersByEngine: mutexWaiters,
      });
    } else {
      states.push({
        kind: 'token',
        lockName: names.m,
        holders: [{ ownerId: mContents[0], expiresAt: now + mPttl, fencingToken: 0, holdCount: 1 }],
        waitersByEngine: mutexWaiters,
      });
    }
  }

  const rw = sharedHolders(rwHash, rwHolders, now, 'rw');
  if (rw.holders.length > 0) {
    states.push({ kind: 'read-write', lockName: names.rw, ...rw });
  }

  const fair = new Map(pairs(fairHash));
  const fairOwner = fair.get('owner');
  if (fairOwner && fairPttl > 0) {
    const deadlines = new Map(pairs(fairDeadlines));
    const waiters = new Map<string, number>();
    for (const [waiter] of pairs(fairQueue)) {
      if (Number(deadlines.get(waiter) ?? 0) > now) bump(waiters, engineOf(waiter));
    }
    states.push({
      kind: 'fair',
      lockName: names.fair,
      holders: [
        {
          ownerId: fairOwner,
          expiresAt: now + fairPttl,
          fencingToken: Number(fair.get('fence') ?? 0),
          holdCount: fair.size - 2,
        },
      ],
      waitersByEngine: waiters,
    });
  }

  const sem = sharedHolders(semHash, semHolders, now, 'sem');
  if (sem.holders.length > 0) states.push({ kind: 'semaphore', lockName: names.sem, ...sem });
  return states;
}

/** Holders of a read-write lock or semaphore (holders.lua's layout), and its reserved waiter. */
function sharedHolders(
  flatHash: readonly string[],
  flatHolders: readonly string[],
  now: number,
  tag: 'rw' | 'sem',
): Pick<KindState, 'holders' | 'waitersByEngine'> {
  const hash = new Map(pairs(flatHash));
  const holders: RawHolder[] = [];
  for (const [ownerId, score] of pairs(flatHolders)) {
    const expiresAt = Number(score);
    if (expiresAt <= now) continue; // expired, not pruned yet
    const holds = (hash.get(`o:${ownerId}`) ?? '').split(' ').filter(Boolean).length;
    const holder: RawHolder = { ownerId, expiresAt, fencingToken: 0, holdCount: Math.max(1, holds) };
    if (tag === 'rw') holder.mode = hash.get('writer') === ownerId ? 'write' : 'read';
    else holder.permits = Number(hash.get(`n:${ownerId}`) ?? 1);
    holders.push(holder);
  }
  // A writer waiting (read-write) or a reservation for a large request (semaphore).
  const waitersByEngine = new Map<string, number>();
  const marker = hash.get('ww');
  if (marker && Number(hash.get('wwx') ?? 0) > now) bump(waitersByEngine, engineOf(marker));
  return { holders, waitersByEngine };
}
