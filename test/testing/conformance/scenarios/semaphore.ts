import { LONG_MS, release, Scenario, seed, sem, SHORT_MS, sleep, WAITER_TTL_MS } from './steps';

/** Conformance scenarios of the semaphore (semaphore-*.lua, read-write-abandon.lua, holders-renew.lua). */
export const SEMAPHORE_SCENARIOS: Scenario[] = [
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
  {
    name: 'refuses an argument out of range before writing anything (args.lua)',
    steps: [
      {
        do: 'script',
        script: 'semaphore-acquire',
        tag: 'sem',
        keys: ['lock', 'aux', 'fence'],
        args: ['owner-A', 'hold-h1', 1, LONG_MS, 86_400_000, '0', 'ch', 'PUBLISH', 1, -1],
        want: 'LockRedisError',
      },
      {
        do: 'script',
        script: 'holders-renew',
        tag: 'sem',
        keys: ['lock', 'aux'],
        args: ['owner-A', 'x'],
        want: 'LockRedisError',
      },
    ],
  },
];
