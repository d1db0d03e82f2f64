import { fair, LONG_MS, release, Scenario, seed, sleep, WAITER_TTL_MS } from './steps';

/** Conformance scenarios of the fair lock (fair-acquire.lua, fair-abandon.lua, mutex-release.lua, renew.lua). */
export const FAIR_LOCK_SCENARIOS: Scenario[] = [
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
];
