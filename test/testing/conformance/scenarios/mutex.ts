import { LONG_MS, mutex, PAST_SHORT_MS, release, Scenario, seed, SHORT_MS, sleep, token } from './steps';

/** Conformance scenarios of the reentrant mutex (mutex-acquire.lua, mutex-release.lua, renew.lua). */
export const MUTEX_SCENARIOS: Scenario[] = [
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
    name: 'one hold is a string: a re-sent grant counts nothing; a waiter marks it; a second hold turns it into the hash, marked',
    steps: [
      mutex('A', { want: 'granted' }),
      mutex('A', { want: 'reentered' }),
      mutex('B', { process: 'P2', want: 'busy' }),
      mutex('B', { process: 'P2', want: 'busy' }),
      mutex('A', { hold: 'h2', leaseMs: 90_000, want: 'reentered' }),
      { do: 'renew', kind: 'mutex', who: ['A', 'B'], leaseMs: 30_000, want: ['renewed', 'taken-over'] },
      release('mutex', 'A', { want: 'still-held' }),
      release('mutex', 'A', { hold: 'h2', want: 'released' }),
    ],
  },
  {
    name: 'a released string is gone for a retried release; a marked one publishes',
    steps: [
      mutex('A'),
      mutex('B', { process: 'P2', want: 'busy' }),
      release('mutex', 'B', { want: 'not-held' }),
      release('mutex', 'A', { hold: 'h2', want: 'not-held' }),
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
    // The release reads the waiters key only when a waiter marked the grant; the failed busy attempt
    // did not get that far (its ZADD failed first, and a script stops at its first error).
    name: 'foreign data at its waiters key fails a busy attempt (WRONGTYPE); the unmarked release never reads it',
    steps: [
      mutex('A', { process: 'P1' }),
      seed('m', 'aux', { type: 'string', value: 'app data' }),
      mutex('B', { process: 'P2', want: 'LockRedisError' }),
      release('mutex', 'A', { want: 'released' }),
      release('mutex', 'A', { want: 'not-held' }),
    ],
  },
  {
    name: 'refuses an argument out of range before writing anything (args.lua)',
    steps: [
      {
        do: 'script',
        script: 'mutex-acquire',
        tag: 'm',
        keys: ['lock', 'fence', 'aux'],
        args: ['owner-A', 'hold-h1', 0, 86_400_000, 1, '', '1'],
        want: 'LockRedisError',
      },
      {
        do: 'script',
        script: 'token-acquire',
        tag: 'm',
        keys: ['lock', 'fence'],
        args: ['owner-A', '1.5', 86_400_000, 1],
        want: 'LockRedisError',
      },
      mutex('A'),
      {
        do: 'script',
        script: 'mutex-release',
        tag: 'm',
        keys: ['lock', 'aux'],
        args: ['owner-A', 'hold-h1', 'ch', 'PUBLISH', '0', 'P1', 'soon'],
        want: 'LockRedisError',
      },
      {
        do: 'script',
        script: 'renew',
        tag: 'm',
        keys: ['lock'],
        args: ['owner-A', 2_147_483_648],
        want: 'LockRedisError',
      },
    ],
  },
];
