/*
 * The conformance scenarios: sequences of kind-level requests fed, step by step, to the Redis kinds
 * and to the in-memory kinds. Owners, hold ids and processes are fixed names (the same on both
 * sides), leases are long (60 s, compared within the tolerance) or deliberately short and then
 * slept past. `want` states what a step is meant to provoke on Redis, the reference, so a scenario
 * cannot silently stop testing what its name says. To cover a new script or reply code, add a
 * scenario here (script-replies.ts lists the codes).
 */
import type { LockKinds } from '../../../lib/core/kinds/kind-registry';
import type { LockKindTag } from '../../../lib/core/kinds/key-space';
import { CONFORMANCE_SETTINGS, Fixture } from './conformance-sides';

/** The kinds by their LockKinds name. */
export type KindName = keyof Required<LockKinds>;

/** What a call is about: kind, owner (a letter), hold and the options the kind reads. */
export interface Call {
  kind: KindName;
  /** Owner 'A' is the owner id 'owner-A' on both sides. */
  who: string;
  /** Hold id (default 'h1'). */
  hold?: string;
  mode?: 'read' | 'write';
  limit?: number;
  permits?: number;
}

/** The decoded outcome a step should have on Redis: a status / result, or the error's class name. */
export type Want =
  | 'granted'
  | 'reentered'
  | 'busy'
  | 'not-held'
  | 'released'
  | 'still-held'
  | 'LockWrongTypeError'
  | 'LockUpgradeError'
  | 'LockRedisError';

/** One step of a scenario. */
export type Step =
  | (Call & {
      do: 'attempt';
      leaseMs?: number;
      reenter?: boolean;
      /** reserveTokens (cohort kinds). */
      reserve?: number;
      /** The caller's process id (cohort kinds). */
      process?: string;
      /** A tryAcquire-like attempt with no time left to wait (the semaphore then never reserves). */
      noWait?: boolean;
      want?: Want;
    })
  | (Call & { do: 'release'; yieldTo?: { process: string; ms: number }; want?: Want })
  | (Call & { do: 'abandon' })
  | { do: 'renew'; kind: KindName; who: string[]; leaseMs?: number; want?: string[] }
  | { do: 'seed'; tag: LockKindTag; at: 'lock' | 'aux' | 'deadlines'; fixture: Fixture }
  | { do: 'sleep'; ms: number };

/** A named sequence of steps on one user key. */
export interface Scenario {
  name: string;
  steps: Step[];
  /** Leave the fence counter absent, so the first token is floored by the server clock. */
  freshFence?: boolean;
}

/** The default lease of a step. */
export const LONG_MS = 60_000;
/** A lease (or reservation) a scenario then sleeps past. */
const SHORT_MS = 40;
const PAST_SHORT_MS = 150;
const WAITER_TTL_MS = CONFORMANCE_SETTINGS.waiterTtlMs;

const mutex = (who: string, extra: Partial<Extract<Step, { do: 'attempt' }>> = {}): Step => ({
  do: 'attempt',
  kind: 'mutex',
  who,
  ...extra,
});
const token = (who: string, extra: Partial<Extract<Step, { do: 'attempt' }>> = {}): Step => ({
  do: 'attempt',
  kind: 'token',
  who,
  ...extra,
});
const release = (
  kind: KindName,
  who: string,
  extra: Partial<Extract<Step, { do: 'release' }>> = {},
): Step => ({
  do: 'release',
  kind,
  who,
  ...extra,
});
const rw = (
  who: string,
  mode: 'read' | 'write',
  extra: Partial<Extract<Step, { do: 'attempt' }>> = {},
): Step => ({
  do: 'attempt',
  kind: 'readWrite',
  who,
  mode,
  ...extra,
});
const fair = (who: string, extra: Partial<Extract<Step, { do: 'attempt' }>> = {}): Step => ({
  do: 'attempt',
  kind: 'fair',
  who,
  ...extra,
});
const sem = (who: string, limit: number, extra: Partial<Extract<Step, { do: 'attempt' }>> = {}): Step => ({
  do: 'attempt',
  kind: 'semaphore',
  who,
  limit,
  ...extra,
});
const seed = (tag: LockKindTag, at: 'lock' | 'aux' | 'deadlines', fixture: Fixture): Step => ({
  do: 'seed',
  tag,
  at,
  fixture,
});
const sleep = (ms: number): Step => ({ do: 'sleep', ms });

/** The scenarios, grouped by the kind they are about. */
export const SCENARIOS: Record<string, Scenario[]> = {
  'reentrant mutex': [
    {
      name: 'grants, re-enters, refuses another owner, releases hold by hold',
      steps: [
        mutex('A', { want: 'granted' }),
        mutex('A', { hold: 'h2', leaseMs: 30_000, want: 'reentered' }),
        mutex('B', { want: 'busy' }),
        release('mutex', 'A', { hold: 'h2', want: 'still-held' }),
        release('mutex', 'A', { hold: 'h2', want: 'not-held' }),
        release('mutex', 'B', { want: 'not-held' }),
        release('mutex', 'A', { want: 'released' }),
        release('mutex', 'A', { want: 'not-held' }),
      ],
    },
    {
      name: 're-entry only: not held on a free key and on a key held by another owner',
      steps: [
        mutex('A', { reenter: true, want: 'not-held' }),
        mutex('B'),
        mutex('A', { reenter: true, want: 'not-held' }),
      ],
    },
    {
      name: 'takes the first token from the server clock when the counter is gone',
      freshFence: true,
      steps: [mutex('A', { want: 'granted' }), release('mutex', 'A')],
    },
    {
      name: 'a lease that ran out frees the lock; the late release and renewal report it',
      steps: [
        mutex('A', { leaseMs: SHORT_MS }),
        sleep(PAST_SHORT_MS),
        { do: 'renew', kind: 'mutex', who: ['A'], want: ['gone'] },
        release('mutex', 'A', { want: 'not-held' }),
        mutex('B', { want: 'granted' }),
      ],
    },
    {
      name: 'renews its own lease, reports another owner as a takeover',
      steps: [
        mutex('A'),
        { do: 'renew', kind: 'mutex', who: ['A', 'B'], leaseMs: 30_000, want: ['renewed', 'taken-over'] },
      ],
    },
    {
      name: 'a busy attempt records its process; the release publishes only when someone waits',
      steps: [
        mutex('A', { process: 'P1', reserve: 4 }),
        release('mutex', 'A', { want: 'released' }),
        mutex('A', { process: 'P1', reserve: 4 }),
        mutex('B', { process: 'P2', want: 'busy' }),
        mutex('C', { process: 'P3', want: 'busy' }),
        mutex('B', { process: 'P2', want: 'busy' }),
        mutex('D', { want: 'busy' }),
        release('mutex', 'A', { want: 'released' }),
        mutex('C', { process: 'P3', reserve: 4, want: 'granted' }),
      ],
    },
    {
      name: 'a cohort that ends at its bound reserves the lock for the longest waiting process',
      steps: [
        mutex('A', { process: 'P1', reserve: 33, want: 'granted' }),
        mutex('B', { process: 'P2', want: 'busy' }),
        mutex('C', { process: 'P3', want: 'busy' }),
        release('mutex', 'A', { yieldTo: { process: 'P1', ms: 30_000 }, want: 'released' }),
        mutex('E', { process: 'P1', want: 'busy' }),
        mutex('C', { process: 'P3', want: 'busy' }),
        mutex('F', { want: 'busy' }),
        { do: 'renew', kind: 'mutex', who: ['A'], want: ['taken-over'] },
        mutex('C', { process: 'P3', reenter: true, want: 'not-held' }),
        mutex('B', { process: 'P2', reserve: 33, want: 'granted' }),
        release('mutex', 'B', { yieldTo: { process: 'P2', ms: 30_000 } }),
      ],
    },
    {
      name: 'the reservation skips the releasing process itself and expires after its ms',
      steps: [
        mutex('A', { process: 'P1' }),
        mutex('Z', { process: 'P1' }),
        mutex('B', { process: 'P2' }),
        release('mutex', 'A', { yieldTo: { process: 'P1', ms: SHORT_MS } }),
        sleep(PAST_SHORT_MS),
        mutex('Z', { process: 'P1', want: 'granted' }),
        release('mutex', 'Z', { yieldTo: { process: 'P1', ms: SHORT_MS } }),
      ],
    },
    {
      name: 'a token lock of the same name is busy for the mutex',
      steps: [
        token('A'),
        mutex('B', { process: 'P2', want: 'busy' }),
        release('token', 'A', { want: 'released' }),
      ],
    },
    {
      name: 'refuses foreign data at its key and leaves it untouched',
      steps: [
        seed('m', 'lock', { type: 'list', items: ['app', 'data'] }),
        mutex('A', { want: 'LockWrongTypeError' }),
        release('mutex', 'A', { want: 'not-held' }),
        { do: 'renew', kind: 'mutex', who: ['A'], want: ['taken-over'] },
        seed('m', 'lock', { type: 'string', value: 'app data' }),
        mutex('A', { want: 'LockWrongTypeError' }),
        seed('m', 'lock', { type: 'hash', fields: { name: 'app' }, ttlMs: LONG_MS }),
        mutex('A', { want: 'LockWrongTypeError' }),
        seed('m', 'lock', { type: 'hash', fields: { owner: 'owner-B', fence: '7', h1: '1' } }),
        mutex('A', { want: 'LockWrongTypeError' }),
        seed('m', 'lock', { type: 'hash', fields: { x: '+P9' } }),
        mutex('A', { process: 'P1', want: 'LockWrongTypeError' }),
      ],
    },
    {
      name: 'foreign data at its waiters key fails the busy attempt and the release (WRONGTYPE)',
      steps: [
        mutex('A', { process: 'P1' }),
        seed('m', 'aux', { type: 'string', value: 'app data' }),
        mutex('B', { process: 'P2', want: 'LockRedisError' }),
        release('mutex', 'A', { want: 'LockRedisError' }),
        release('mutex', 'A', { want: 'not-held' }),
      ],
    },
  ],
  'token lock': [
    {
      name: 'grants with a reserved block, answers a re-sent grant with the same token, refuses others',
      steps: [
        token('A', { reserve: 5, want: 'granted' }),
        token('A', { reserve: 5, want: 'granted' }),
        token('B', { want: 'busy' }),
        mutex('B', { process: 'P2', want: 'busy' }),
        release('token', 'B', { want: 'not-held' }),
        { do: 'renew', kind: 'token', who: ['A', 'B'], want: ['renewed', 'taken-over'] },
        release('token', 'A', { want: 'released' }),
        release('token', 'A', { want: 'not-held' }),
        token('B', { want: 'granted' }),
      ],
    },
    {
      name: 'a re-sent grant whose counter is gone takes a new token',
      freshFence: true,
      steps: [
        seed('m', 'lock', { type: 'string', value: 'owner-A', ttlMs: LONG_MS }),
        token('A', { want: 'granted' }),
      ],
    },
    {
      name: 'a mutex of the same name is busy for the token lock, and its release leaves it alone',
      steps: [mutex('A'), token('B', { want: 'busy' }), release('token', 'B', { want: 'not-held' })],
    },
    {
      name: 'a lease that ran out frees the lock',
      steps: [
        token('A', { leaseMs: SHORT_MS }),
        sleep(PAST_SHORT_MS),
        { do: 'renew', kind: 'token', who: ['A'], want: ['gone'] },
        release('token', 'A', { want: 'not-held' }),
        token('B', { want: 'granted' }),
      ],
    },
    {
      name: 'refuses foreign data at its key',
      steps: [
        seed('m', 'lock', { type: 'zset', members: [['x', 1]] }),
        token('A', { want: 'LockWrongTypeError' }),
        seed('m', 'lock', { type: 'string', value: 'app data' }),
        token('A', { want: 'LockWrongTypeError' }),
        release('token', 'A', { want: 'not-held' }),
        seed('m', 'lock', { type: 'hash', fields: { owner: 'owner-B' } }),
        token('A', { want: 'LockWrongTypeError' }),
      ],
    },
  ],
  'read-write lock': [
    {
      name: 'readers share, re-enter, and release hold by hold',
      steps: [
        rw('A', 'read', { want: 'granted' }),
        rw('B', 'read', { leaseMs: 30_000, want: 'granted' }),
        rw('A', 'read', { hold: 'h2', want: 'reentered' }),
        release('readWrite', 'A', { hold: 'h2', want: 'still-held' }),
        release('readWrite', 'A', { hold: 'h2', want: 'not-held' }),
        release('readWrite', 'A', { want: 'released' }),
        release('readWrite', 'B', { want: 'released' }),
      ],
    },
    {
      name: 'a refused writer leaves a marker that holds back new readers until it gives up',
      steps: [
        rw('A', 'read'),
        rw('W', 'write', { want: 'busy' }),
        rw('V', 'write', { want: 'busy' }),
        rw('B', 'read', { want: 'busy' }),
        rw('A', 'read', { hold: 'h2', want: 'reentered' }),
        { do: 'abandon', kind: 'readWrite', who: 'V', mode: 'write' },
        { do: 'abandon', kind: 'readWrite', who: 'W', mode: 'write' },
        rw('B', 'read', { want: 'granted' }),
      ],
    },
    {
      name: 'a writer excludes everyone, may read (downgrade), and a reader may not write (upgrade)',
      steps: [
        rw('A', 'read'),
        rw('A', 'write', { hold: 'h2', want: 'LockUpgradeError' }),
        release('readWrite', 'A'),
        rw('W', 'write', { want: 'granted' }),
        rw('B', 'read', { want: 'busy' }),
        rw('W', 'read', { hold: 'h2', want: 'reentered' }),
        release('readWrite', 'W', { mode: 'write', want: 'still-held' }),
        rw('B', 'read', { want: 'granted' }),
        release('readWrite', 'W', { hold: 'h2', want: 'released' }),
      ],
    },
    {
      name: 'a writer gets in once the readers are gone and takes its marker back',
      steps: [
        rw('A', 'read', { leaseMs: SHORT_MS }),
        rw('W', 'write', { want: 'busy' }),
        sleep(PAST_SHORT_MS),
        rw('W', 'write', { want: 'granted' }),
        rw('W', 'write', { reenter: true, hold: 'h2', want: 'reentered' }),
        rw('X', 'write', { reenter: true, want: 'not-held' }),
        { do: 'renew', kind: 'readWrite', who: ['W', 'A'], want: ['renewed', 'gone'] },
      ],
    },
    {
      name: 'an expired reader is pruned by the next access, which wakes the waiters',
      steps: [
        rw('A', 'read', { leaseMs: SHORT_MS }),
        rw('B', 'read'),
        sleep(PAST_SHORT_MS),
        release('readWrite', 'A', { want: 'not-held' }),
        rw('A', 'read', { leaseMs: SHORT_MS }),
        sleep(PAST_SHORT_MS),
        rw('C', 'read', { want: 'granted' }),
      ],
    },
    {
      name: 'refuses foreign data at either of its keys',
      steps: [
        seed('rw', 'lock', { type: 'hash', fields: { writer: 'app' } }),
        rw('A', 'read', { want: 'LockWrongTypeError' }),
        release('readWrite', 'A', { want: 'not-held' }),
        { do: 'abandon', kind: 'readWrite', who: 'A', mode: 'write' },
        { do: 'renew', kind: 'readWrite', who: ['A'], want: ['gone'] },
        seed('rw', 'lock', { type: 'hash', fields: { writer: 'app' }, ttlMs: LONG_MS }),
        seed('rw', 'aux', { type: 'string', value: 'app data', ttlMs: LONG_MS }),
        rw('A', 'write', { want: 'LockWrongTypeError' }),
      ],
    },
  ],
  'fair lock': [
    {
      name: 'grants the head, re-enters, queues the others in order, releases hold by hold',
      steps: [
        fair('A', { want: 'granted' }),
        fair('A', { hold: 'h2', want: 'reentered' }),
        fair('B', { want: 'busy' }),
        fair('C', { want: 'busy' }),
        fair('B', { want: 'busy' }),
        release('fair', 'A', { hold: 'h2', want: 'still-held' }),
        release('fair', 'B', { want: 'not-held' }),
        release('fair', 'A', { want: 'released' }),
        fair('C', { want: 'busy' }),
        fair('B', { want: 'granted' }),
        { do: 'renew', kind: 'fair', who: ['B', 'C'], leaseMs: 30_000, want: ['renewed', 'taken-over'] },
      ],
    },
    {
      name: 're-entry only is refused when not held',
      steps: [
        fair('A', { reenter: true, want: 'not-held' }),
        fair('B'),
        fair('A', { reenter: true, want: 'not-held' }),
      ],
    },
    {
      name: 'a waiter that gives up leaves the queue and wakes the next head of a free lock',
      steps: [
        fair('A'),
        fair('B'),
        fair('C'),
        { do: 'abandon', kind: 'fair', who: 'C' },
        { do: 'abandon', kind: 'fair', who: 'C' },
        fair('C'),
        release('fair', 'A'),
        { do: 'abandon', kind: 'fair', who: 'B' },
        fair('C', { want: 'granted' }),
      ],
    },
    {
      name: 'a head whose deadline passed is dropped by the next attempt, which wakes the new head',
      // B's deadline passes for sure (the sleeps alone outlast it); C's is WAITER_TTL_MS - 1.5 s away.
      steps: [
        fair('A'),
        fair('B'),
        sleep(WAITER_TTL_MS - 1000),
        fair('C'),
        sleep(1500),
        release('fair', 'A', { want: 'released' }),
        fair('D', { want: 'busy' }),
        fair('C', { want: 'granted' }),
      ],
    },
    {
      name: 'refuses foreign data at each of its keys',
      steps: [
        seed('fair', 'lock', { type: 'string', value: 'x', ttlMs: LONG_MS }),
        fair('A', { want: 'LockWrongTypeError' }),
        seed('fair', 'lock', { type: 'hash', fields: { owner: 'owner-B' }, ttlMs: LONG_MS }),
        seed('fair', 'aux', { type: 'hash', fields: { a: '1' }, ttlMs: LONG_MS }),
        fair('A', { want: 'LockWrongTypeError' }),
        { do: 'abandon', kind: 'fair', who: 'A' },
        seed('fair', 'aux', { type: 'zset', members: [['owner-A', 1]], ttlMs: LONG_MS }),
        seed('fair', 'deadlines', { type: 'list', items: ['x'] }),
        fair('A', { want: 'LockWrongTypeError' }),
        { do: 'abandon', kind: 'fair', who: 'A' },
      ],
    },
  ],
  semaphore: [
    {
      name: 'grants up to its limit, re-enters, releases hold by hold',
      steps: [
        sem('A', 2, { want: 'granted' }),
        sem('B', 2, { leaseMs: 30_000, want: 'granted' }),
        sem('A', 2, { hold: 'h2', want: 'reentered' }),
        sem('C', 2, { noWait: true, want: 'busy' }),
        release('semaphore', 'A', { hold: 'h2', want: 'still-held' }),
        release('semaphore', 'A', { hold: 'h2', want: 'not-held' }),
        release('semaphore', 'A', { want: 'released' }),
        sem('C', 2, { want: 'granted' }),
        { do: 'renew', kind: 'semaphore', who: ['B', 'A'], want: ['renewed', 'gone'] },
      ],
    },
    {
      name: 'several permits at once, and a refused request reserves what it needs',
      steps: [
        sem('A', 3, { permits: 2, want: 'granted' }),
        sem('B', 3, { permits: 2, want: 'busy' }),
        sem('C', 3, { want: 'busy' }),
        sem('D', 3, { permits: 3, want: 'busy' }),
        release('semaphore', 'A', { want: 'released' }),
        sem('C', 3, { want: 'busy' }),
        sem('B', 3, { permits: 2, want: 'busy' }),
        sem('D', 3, { permits: 3, want: 'granted' }),
        { do: 'abandon', kind: 'semaphore', who: 'D' },
        sem('C', 3, { want: 'busy' }),
        release('semaphore', 'D', { want: 'released' }),
        sem('C', 3, { want: 'granted' }),
      ],
    },
    {
      name: 'a reservation with no permit held is busy with no known end; abandon drops it',
      steps: [
        sem('A', 1),
        sem('B', 1, { want: 'busy' }),
        release('semaphore', 'A'),
        sem('C', 1, { want: 'busy' }),
        { do: 'abandon', kind: 'semaphore', who: 'C' },
        { do: 'abandon', kind: 'semaphore', who: 'B' },
        sem('C', 1, { want: 'granted' }),
      ],
    },
    {
      name: 'expired permits and reservations come back',
      steps: [
        sem('A', 1, { leaseMs: SHORT_MS, permits: 1 }),
        sem('B', 2, { permits: 2, want: 'busy' }),
        sleep(WAITER_TTL_MS + 200),
        sem('C', 1, { reenter: true, want: 'not-held' }),
        sem('C', 1, { want: 'granted' }),
      ],
    },
    {
      name: 'refuses foreign data at either of its keys',
      steps: [
        seed('sem', 'aux', { type: 'zset', members: [['owner-B', 1]] }),
        sem('A', 1, { want: 'LockWrongTypeError' }),
        release('semaphore', 'A', { want: 'not-held' }),
        { do: 'renew', kind: 'semaphore', who: ['A'], want: ['gone'] },
        { do: 'abandon', kind: 'semaphore', who: 'A' },
        seed('sem', 'aux', { type: 'list', items: ['x'], ttlMs: LONG_MS }),
        sem('A', 1, { want: 'LockWrongTypeError' }),
      ],
    },
  ],
};
